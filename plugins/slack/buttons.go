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
	maxSectionText = 3000
)

// buttonLimits bound the buttons: 25 elements in an actions block, an
// action_id of up to 255 characters, a label of up to 75.
var buttonLimits = channel.ButtonLimits{Platform: "Slack", PerRow: 25, ID: 255, Label: 75}

// messageBlocks is the Block Kit layout of a message with buttons: the
// text in section blocks (mrkdwn, at most 3000 characters each, cut at
// line ends) and one actions block per row of buttons, each button's
// action_id and value the host's id. No buttons: nil (the message is its
// text). Refused with CodeInvalidRequest before any request, as Slack
// would refuse them: an id empty, over 255 characters or used twice, a
// blank label or one over 75 characters, more than 25 in a row, more
// blocks than 50.
func messageBlocks(text string, rows [][]channel.Button) ([]slack.Block, error) {
	if err := buttonLimits.Check(rows); err != nil {
		return nil, err
	}
	var actions []slack.Block
	for _, row := range rows {
		if len(row) == 0 {
			continue
		}
		var els []slack.BlockElement
		for _, b := range row {
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
