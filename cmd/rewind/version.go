package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rewind-gg/rewind/internal/buildinfo"
)

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the VCS revision, the Go version and the wire protocol version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			in := buildinfo.Read()
			rev := in.Revision
			if rev == "" {
				rev = "unknown"
			}
			fmt.Fprintf(stdout, "rewind %s\nrevision %s\n%s\nprotocol %s (ALPN rewind/%s)\n", in.Version, rev, in.GoVersion, in.Protocol, in.Protocol)
			return nil
		},
	}
}
