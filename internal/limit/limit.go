// Package limit reads a request body within its surface's size limit and
// says what went wrong when it cannot (too large, too slow, unreadable), so
// that each surface answers in its own terms: a JSON-RPC error on /mcp and
// /a2a, problem+json on the admin API. It decides no limit itself: the
// server's configuration does.
package limit

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
)

// Failure is why a body could not be read: its HTTP status (413, 408 or
// 400) and a sentence for the caller, in the storefront's own words.
type Failure struct {
	Status int
	Detail string
}

// peek is how much of an oversized body is read to name its call.
const peek = 4 << 10

// Body reads r's body whole, refusing one of more than max bytes. A body
// declared larger is refused before it is read, unless the client waits for
// 100-continue, with only its first bytes read to name the call. On failure
// it returns what it read, for the caller to name the call from, and asks
// net/http to close the connection after the answer: the rest of the body
// is never read.
func Body(w http.ResponseWriter, r *http.Request, max int64) ([]byte, *Failure) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > max {
		w.Header().Set("Connection", "close")
		var prefix []byte
		if r.Header.Get("Expect") == "" {
			prefix, _ = io.ReadAll(io.LimitReader(r.Body, peek))
		}
		return prefix, TooLarge(max)
	}
	b, err := readAll(http.MaxBytesReader(w, r.Body, max), r.ContentLength)
	if err != nil {
		w.Header().Set("Connection", "close")
		return b, Classify(err)
	}
	return b, nil
}

// TooLarge is the failure of a body over max bytes.
func TooLarge(max int64) *Failure {
	return &Failure{Status: http.StatusRequestEntityTooLarge,
		Detail: "the request body is larger than " + Size(max) + ", the most this endpoint accepts"}
}

// Classify names a body read error: the size limit (an
// http.MaxBytesReader's), the read deadline, or a body that could not be
// read (a broken chunked encoding, a client gone).
func Classify(err error) *Failure {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return TooLarge(mbe.Limit)
	case Timeout(err):
		return &Failure{Status: http.StatusRequestTimeout,
			Detail: "the request body did not arrive in time; send it whole and promptly"}
	}
	return &Failure{Status: http.StatusBadRequest, Detail: "the request body could not be read"}
}

// Timeout reports whether err is a read that ran past its deadline.
func Timeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// Size writes n bytes the way the README and the flags do: 1 MiB, 512 KiB,
// 2 GiB, 100 bytes.
func Size(n int64) string {
	for _, u := range []struct {
		name  string
		bytes int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.bytes && n%u.bytes == 0 {
			return strconv.FormatInt(n/u.bytes, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Buffered is a request body already read whole (Body), handed on so that
// the handlers after the reader take its bytes as they are (ReadAll)
// instead of reading them into a copy of their own.
type Buffered struct {
	b []byte
	r bytes.Reader
}

// NewBuffered is a body of b, which is not to be written after.
func NewBuffered(b []byte) *Buffered {
	x := &Buffered{b: b}
	x.r.Reset(b)
	return x
}

func (x *Buffered) Read(p []byte) (int, error) { return x.r.Read(p) }

// Reread is a body of b, which is not to be written after, for a reader
// that has read body to its end (ReadAll) and hands it on: a Buffered
// body is reset to b rather than a new one made.
func Reread(body io.ReadCloser, b []byte) io.ReadCloser {
	if x, ok := body.(*Buffered); ok {
		x.b = b
		x.r.Reset(b)
		return x
	}
	return NewBuffered(b)
}

// Close implements io.Closer: there is nothing to release.
func (x *Buffered) Close() error { return nil }

// ReadAll reads the rest of body as io.ReadAll does, but for a Buffered
// returns the bytes not yet read without copying them. They are shared:
// not to be written.
func ReadAll(body io.Reader) ([]byte, error) {
	if x, ok := body.(*Buffered); ok {
		rest := x.b[len(x.b)-x.r.Len():]
		x.r.Reset(nil)
		return rest, nil
	}
	return io.ReadAll(body)
}

// readAll is io.ReadAll into a buffer sized for the n bytes the body
// declares (none when n is not positive), one more for the read that
// finds its end.
func readAll(r io.Reader, n int64) ([]byte, error) {
	if n <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, n+1)
	for {
		k, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		switch {
		case err == io.EOF:
			return b, nil
		case err != nil:
			return b, err
		case len(b) == cap(b):
			b = append(b, 0)[:len(b)]
		}
	}
}
