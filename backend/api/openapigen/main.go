// Command openapigen writes the API's description (go generate in
// backend/api runs it): openapigen FILE.
package main

import (
	"fmt"
	"os"

	"github.com/google/renameio/v2"

	"shepherd/backend/api"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: openapigen FILE")
		os.Exit(2)
	}
	b, err := api.Spec()
	if err == nil {
		err = renameio.WriteFile(os.Args[1], b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}
