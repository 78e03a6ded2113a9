package governance

import (
	"context"
	"net"
)

// Dial dials address through c's guarded dialer.
func Dial(c *Client, ctx context.Context, address string) (net.Conn, error) {
	d := &net.Dialer{Control: c.guard}
	return d.DialContext(ctx, "tcp", address)
}
