// Package rawhttp speaks HTTP/1.1 over a bare TCP connection, for tests
// that must send what no well-behaved client sends: a head or body
// dribbled a byte at a time, repeated or oversized headers, a declared
// length the body never reaches. It writes while it reads, so an answer
// the server sends before the body is done (a 413) is still read.
package rawhttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/storefront/storefront/internal/clock"
)

// Response is an answer read off the wire.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Close is the server's "Connection: close" (which reading removes
	// from Header).
	Close bool
	// Took is how long the exchange took, from the dial to the end of
	// the answer or of the connection.
	Took time.Duration
}

// Request builds a request's bytes: method, target, headers in order
// (each "Name: value", repeats allowed) and body. Host defaults to addr's
// and Content-Length to the body's length when headers name neither;
// "Connection: close" is added so every exchange ends with its
// connection.
func Request(addr, method, target string, headers []string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, target)
	has := func(name string) bool {
		for _, h := range headers {
			if k, _, _ := strings.Cut(h, ":"); strings.EqualFold(strings.TrimSpace(k), name) {
				return true
			}
		}
		return false
	}
	if !has("Host") {
		b.WriteString("Host: " + addr + "\r\n")
	}
	if !has("Content-Length") && !has("Transfer-Encoding") && (len(body) > 0 || method == http.MethodPost || method == http.MethodPut) {
		b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	if !has("Connection") {
		b.WriteString("Connection: close\r\n")
	}
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// Do sends raw on a new connection to addr and reads one answer, giving up
// after timeout. Writing goes on beside the reading and its errors are
// ignored: a server may answer and close before it has read everything.
// The answer's body is read up to 16 MiB.
func Do(addr string, raw []byte, timeout time.Duration) (*Response, error) {
	return Dribble(addr, raw, nil, 0, 0, timeout)
}

// Dribble is Do sending lead at once and then rest in pieces of chunk
// bytes with pause between them, the way a slow or hostile client does.
// A server that cuts the connection without an answer is an error, with
// Took saying when.
func Dribble(addr string, lead, rest []byte, chunk int, pause, timeout time.Duration) (*Response, error) {
	start := clock.Start()
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(clock.Deadline(timeout - start.Elapsed()))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		if _, err := conn.Write(lead); err != nil {
			return
		}
		for i := 0; i < len(rest); i += chunk {
			select {
			case <-stop:
				return
			case <-time.After(pause):
			}
			if _, err := conn.Write(rest[i:min(i+chunk, len(rest))]); err != nil {
				return
			}
		}
	}()
	r, err := Read(bufio.NewReader(conn))
	if r != nil {
		r.Took = start.Elapsed()
	}
	return r, err
}

// Read reads one answer from br, skipping 100 Continue, with its body (up
// to 16 MiB).
func Read(br *bufio.Reader) (*Response, error) {
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return &Response{}, fmt.Errorf("no answer: %w", err)
		}
		if resp.StatusCode == http.StatusContinue {
			resp.Body.Close()
			continue
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Close: resp.Close}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return r, fmt.Errorf("reading the answer's body: %w", err)
		}
		return r, nil
	}
}

// Chunked encodes body in the chunked transfer coding, in pieces of size
// bytes, for a request sent with Transfer-Encoding: chunked.
func Chunked(body []byte, size int) []byte {
	var b bytes.Buffer
	for i := 0; i < len(body); i += size {
		piece := body[i:min(i+size, len(body))]
		fmt.Fprintf(&b, "%x\r\n", len(piece))
		b.Write(piece)
		b.WriteString("\r\n")
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}

// Closed waits up to timeout for the server to close conn, reading and
// discarding what it sends, and reports how long that took; ok is false
// when the connection was still open at timeout.
func Closed(conn net.Conn, timeout time.Duration) (took time.Duration, ok bool) {
	start := clock.Start()
	_ = conn.SetReadDeadline(clock.Deadline(timeout))
	buf := make([]byte, 4096)
	for {
		if _, err := conn.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return start.Elapsed(), false
			}
			return start.Elapsed(), true
		}
	}
}
