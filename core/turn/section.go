package turn

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/chatprompt"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// section is the messaging section of the system prompt of session key's
// turns in m's chat (core/chatprompt), "" when it is turned off. It
// changes only with the day, the chat's title or the channel's
// capabilities, so the warm process of a session keeps it.
func (t *Turns) section(set Settings, key sessionkey.Key, m *message.Message) string {
	if set.PromptSection == nil || m == nil {
		return ""
	}
	var caps channel.Capabilities
	if t.opts.Labels != nil {
		caps, _ = t.opts.Labels.Capabilities(m.Instance)
	}
	loc := set.Location
	if loc == nil {
		loc = time.Local
	}
	_, tools := t.agentTools(key, m)
	c := chatprompt.Chat{
		Agent:          key.Agent,
		Channel:        t.channelLabel(m.Instance, m.Channel),
		Markup:         caps.Markup,
		MaxText:        caps.MaxTextLength,
		Type:           m.ChatType,
		Title:          m.ChatTitle,
		RequireMention: set.RequireMention != nil && m.IsGroup() && set.RequireMention(m),
		Files:          slices.Contains(caps.MediaOut, channel.MediaDocument),
		SendFile: slices.ContainsFunc(tools, func(s string) bool {
			return strings.HasSuffix(s, "__send_file")
		}),
		Reactions: t.opts.Output.CanReact(m.Instance) && slices.ContainsFunc(tools, func(s string) bool {
			return strings.HasSuffix(s, "__react")
		}),
		Schedule: slices.ContainsFunc(tools, func(s string) bool {
			return strings.HasSuffix(s, "__schedule_message")
		}),
		MaxFileMB: int(cmp.Or(caps.MaxFileBytes, set.MaxFileBytes) >> 20),
		Date:      t.opts.Now().In(loc),
		Zone:      loc.String(),
		Memory:    hasMemory(set.Workspace),
		Flush:     !t.flushOf(set).Disabled,
	}
	if c.Channel == "" {
		c.Channel = m.Instance
	}
	text, err := set.PromptSection.Render(c)
	if err != nil {
		t.log.Warn("the messaging section of the system prompt could not be written; turns run without it", "error", err)
		return ""
	}
	return text
}

// hasMemory reports whether the workspace holds notes of earlier
// sessions: MEMORY.md or a memory directory.
func hasMemory(workspace string) bool {
	if workspace == "" {
		return false
	}
	for _, p := range []string{"MEMORY.md", "memory"} {
		if _, err := os.Stat(filepath.Join(workspace, p)); err == nil {
			return true
		}
	}
	return false
}
