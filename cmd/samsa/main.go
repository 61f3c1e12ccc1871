// Command samsa is the Samsa broker and its command line tools in one
// binary; see "samsa --help".
package main

import "github.com/samsa-streaming/samsa/internal/cli"

func main() {
	cli.Execute()
}
