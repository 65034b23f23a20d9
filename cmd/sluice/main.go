// Command sluice runs the Sluice pipeline and administers it. See README.md.
package main

import "github.com/sluicehq/sluice/command"

func main() { command.Main() }
