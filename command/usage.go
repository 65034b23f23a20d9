package command

import (
	"bytes"
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// eitherOrHelp prints kong's help with each group of required either/or
// flags (xor) as one alternative: `(--id=N | --group=G)`, where kong's own
// usage line lists them as if all were needed.
func eitherOrHelp(options kong.HelpOptions, ctx *kong.Context) error {
	out := ctx.Stdout
	var buf bytes.Buffer
	ctx.Stdout = &buf
	err := kong.DefaultHelpPrinter(options, ctx)
	ctx.Stdout = out
	if err != nil {
		return err
	}
	text := buf.String()
	if node := ctx.Selected(); node != nil {
		text = eitherOr(text, node)
	}
	_, err = io.WriteString(out, text)
	return err
}

func eitherOr(text string, node *kong.Node) string {
	groups := map[string][]string{}
	var order []string
	for _, group := range node.AllFlags(true) {
		for _, f := range group {
			if !f.Required || len(f.Xor) == 0 {
				continue
			}
			key := f.Xor[0]
			if _, seen := groups[key]; !seen {
				order = append(order, key)
			}
			groups[key] = append(groups[key], f.Summary())
		}
	}
	for _, key := range order {
		if alts := groups[key]; len(alts) > 1 {
			text = strings.Replace(text, strings.Join(alts, " "), "("+strings.Join(alts, " | ")+")", 1)
		}
	}
	return text
}
