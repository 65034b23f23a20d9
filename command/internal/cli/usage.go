package cli

// How --help reads, the way kubectl's does: a command's own flags first,
// either/or flags under a heading of their own, and the deployment-wide
// flags (Globals: the database, Kafka, the key ring, topics, logs) behind
// --help-all, where they come last under their own heading. The top level
// lists the commands one a line, grouped by what they are for.

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// groupedHelp prints a command's help; kong calls it for --help (and for
// sluice alone).
func groupedHelp(options kong.HelpOptions, ctx *kong.Context) error {
	return printHelp(options, ctx, false)
}

// HelpAll is --help-all: help with the deployment-wide flags too.
type HelpAll bool

// BeforeReset prints the help with every flag and exits, as --help does.
func (HelpAll) BeforeReset(ctx *kong.Context) error {
	if err := printHelp(kong.HelpOptions{ValueFormatter: kong.DefaultHelpValueFormatter}, ctx, true); err != nil {
		return err
	}
	ctx.Kong.Exit(0)
	return nil
}

// Headings of the help's sections.
const (
	deploymentHeading = "Deployment-wide flags:"
	requiredOneOf     = "One of these (required):"
	atMostOneOf       = "At most one of these:"
)

// commandGroups are the top level's sections, in order, and the commands
// each holds; a command not named here is listed under "Other commands:".
var commandGroups = []struct {
	title    string
	commands []string
}{
	{"Run the pipeline:", []string{"serve", "ingest", "cdc", "consume", "migrate"}},
	{"Administer:", []string{"tenant", "source", "workspace", "apikey", "admintoken", "eventtype", "endpoint"}},
	{"Operate:", []string{"events", "conflicts", "dlq", "delivery", "reconcile", "lag", "replay", "audit", "erase", "keys", "lifecycle"}},
	{"Check and try:", []string{"health", "doctor", "demo"}},
}

// printHelp prints kong's help of the selected command (the application
// when none is) after arranging the model for it; the process exits right
// after, so the arrangement is never undone.
func printHelp(options kong.HelpOptions, ctx *kong.Context, all bool) error {
	node := ctx.Selected()
	if node == nil {
		node = ctx.Model.Node
		options.NoExpandSubcommands, options.Compact = true, true
		groupCommands(node)
	}
	moveDeploymentFlags(ctx.Model.Node, node, all)
	markEitherOr(node)
	nameGroups(node)
	out := ctx.Stdout
	var buf bytes.Buffer
	ctx.Stdout = &buf
	err := kong.DefaultHelpPrinter(options, ctx)
	ctx.Stdout = out
	if err != nil {
		return err
	}
	text := eitherOr(buf.String(), node)
	if !all {
		path := "sluice"
		if node.Type != kong.ApplicationNode {
			path = node.FullPath()
		}
		text += fmt.Sprintf("\nDeployment-wide flags (database, Kafka, key ring, topics, logs): %s --help-all\n", path)
	}
	_, err = io.WriteString(out, text)
	return err
}

// moveDeploymentFlags takes the application's own flags but --help and
// --help-all off its level and puts them last on node's, hidden, or (all)
// under their heading, so they print after the command's own.
func moveDeploymentFlags(app, node *kong.Node, all bool) {
	var kept, wide []*kong.Flag
	for _, f := range app.Flags {
		if f.Name == "help" || f.Name == "help-all" {
			kept = append(kept, f)
			continue
		}
		wide = append(wide, f)
		if all {
			f.Group = &kong.Group{Key: "deployment", Title: deploymentHeading}
		} else {
			f.Hidden = true
		}
	}
	app.Flags = kept
	node.Flags = append(node.Flags, wide...)
}

// markEitherOr puts each set of either/or flags (kong's xor) of node under
// a heading saying how many of them to give.
func markEitherOr(node *kong.Node) {
	for _, level := range node.AllFlags(true) {
		for _, f := range level {
			if len(f.Xor) == 0 || f.Group != nil {
				continue
			}
			title := atMostOneOf
			if f.Required {
				title = requiredOneOf
			}
			f.Group = &kong.Group{Key: "xor:" + strings.Join(f.Xor, ","), Title: title}
		}
	}
}

// groupTitles are the headings of the flag groups commands declare
// (kong's group tag), by key.
var groupTitles = map[string]string{
	policyGroup: "The deployment's endpoint policy (the processes read the same flags and variables):",
}

// nameGroups gives node's flag groups their headings.
func nameGroups(node *kong.Node) {
	for _, level := range node.AllFlags(true) {
		for _, f := range level {
			if f.Group == nil {
				continue
			}
			if title, ok := groupTitles[f.Group.Key]; ok {
				f.Group.Title = title
			}
		}
	}
}

// groupCommands orders and groups the application's commands by
// commandGroups.
func groupCommands(app *kong.Node) {
	const unlisted = 1 << 20
	rank := func(n *kong.Node) int { // its group's, then its place in it
		for i, g := range commandGroups {
			if j := slices.Index(g.commands, n.Name); j >= 0 {
				return i<<10 + j
			}
		}
		return unlisted
	}
	other := &kong.Group{Key: "other", Title: "Other commands:"}
	for _, child := range app.Children {
		if r := rank(child); r < unlisted {
			title := commandGroups[r>>10].title
			child.Group = &kong.Group{Key: title, Title: title}
		} else if !child.Hidden {
			child.Group = other
		}
	}
	slices.SortStableFunc(app.Children, func(a, b *kong.Node) int { return rank(a) - rank(b) })
}

// eitherOr writes each group of required either/or flags (xor) of the usage
// line as one alternative: `(--id=N | --group=G)`, where kong's own usage
// line lists them as if all were needed.
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
