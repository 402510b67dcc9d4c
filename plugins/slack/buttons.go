package slack

import (
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Block Kit's limits that matter here.
const (
	maxBlocks      = 50
	maxRowButtons  = 25  // elements of an actions block
	maxActionID    = 255 // characters
	maxButtonLabel = 75  // characters
	maxSectionText = 3000
)

// messageBlocks is the Block Kit layout of a message with buttons: the
// text in section blocks (mrkdwn, at most 3000 characters each, cut at
// line ends) and one actions block per row of buttons, each button's
// action_id and value the host's id. No buttons: nil (the message is its
// text). Refused with CodeInvalidRequest before any request, as Slack
// would refuse them: an id empty, over 255 characters or used twice, a
// blank label or one over 75 characters, more than 25 in a row, more
// blocks than 50.
func messageBlocks(text string, rows [][]channel.Button) ([]slack.Block, error) {
	var actions []slack.Block
	seen := map[string]bool{}
	for i, row := range rows {
		if len(row) == 0 {
			continue
		}
		if len(row) > maxRowButtons {
			return nil, channel.Errorf(channel.CodeInvalidRequest, "row %d has %d buttons; Slack takes at most %d", i+1, len(row), maxRowButtons)
		}
		var els []slack.BlockElement
		for j, b := range row {
			switch n := utf8.RuneCountInString(b.ID); {
			case n == 0 || n > maxActionID:
				return nil, channel.Errorf(channel.CodeInvalidRequest, "button %d.%d: an id of 1 to %d characters is needed, not %d", i+1, j+1, maxActionID, n)
			case seen[b.ID]:
				return nil, channel.Errorf(channel.CodeInvalidRequest, "button %d.%d: id %q is used twice; Slack wants them unique in a message", i+1, j+1, b.ID)
			}
			if strings.TrimSpace(b.Label) == "" || utf8.RuneCountInString(b.Label) > maxButtonLabel {
				return nil, channel.Errorf(channel.CodeInvalidRequest, "button %d.%d (%q): a label of 1 to %d characters is needed", i+1, j+1, b.Label, maxButtonLabel)
			}
			seen[b.ID] = true
			els = append(els, slack.NewButtonBlockElement(b.ID, b.ID, slack.NewTextBlockObject(slack.PlainTextType, b.Label, true, false)))
		}
		actions = append(actions, slack.NewActionBlock("", els...))
	}
	if len(actions) == 0 {
		return nil, nil
	}
	var blocks []slack.Block
	for _, part := range sections(text) {
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, part, false, false), nil, nil))
	}
	if len(blocks)+len(actions) > maxBlocks {
		return nil, channel.Errorf(channel.CodeInvalidRequest, "%d blocks; Slack takes at most %d in a message", len(blocks)+len(actions), maxBlocks)
	}
	return append(blocks, actions...), nil
}

// sections cuts text into pieces of at most maxSectionText characters,
// at line ends where it can; empty text has none.
func sections(text string) []string {
	var out []string
	for strings.TrimSpace(text) != "" {
		if utf8.RuneCountInString(text) <= maxSectionText {
			out = append(out, text)
			break
		}
		r := []rune(text)
		cut := maxSectionText
		if i := strings.LastIndex(string(r[:cut]), "\n"); i > 0 {
			cut = utf8.RuneCountInString(string(r[:cut])[:i])
		}
		out = append(out, string(r[:cut]))
		text = strings.TrimLeft(string(r[cut:]), "\n")
	}
	return out
}
