// Command sbprobe tries what the permission sandbox must allow or refuse
// and prints one line per try, "OK <op>" or "FAIL <op>: <error>", to stdout
// (the agent's log). Ops, one per argument:
//
//	write:PATH   create PATH and write to it
//	read:PATH    read PATH
//	tcp:ADDR     connect to a TCP listener
//	udp:ADDR     send one datagram
//	dns:ADDR     look a name up through the DNS server at ADDR (UDP)
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

func main() {
	for _, arg := range os.Args[1:] {
		op, val, _ := strings.Cut(arg, ":")
		if err := try(op, val); err != nil {
			fmt.Printf("FAIL %s: %v\n", arg, err)
		} else {
			fmt.Printf("OK %s\n", arg)
		}
	}
}

func try(op, val string) error {
	switch op {
	case "write":
		return os.WriteFile(val, []byte("written\n"), 0o644)
	case "read":
		_, err := os.ReadFile(val)
		return err
	case "tcp":
		c, err := net.DialTimeout("tcp", val, 2*time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	case "udp":
		c, err := net.Dial("udp", val)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("ping"))
		return err
	case "dns":
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", val)
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := r.LookupHost(ctx, "example.invalid.test")
		return err
	}
	return fmt.Errorf("unknown op %q", op)
}
