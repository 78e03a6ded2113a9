package limit

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// TestReadAllTakesABufferedBodyAsItIs: the bytes of a Buffered body not
// yet read come back without a copy, and once taken the body is at its
// end; any other body is read as io.ReadAll reads it.
func TestReadAllTakesABufferedBodyAsItIs(t *testing.T) {
	b := []byte(`{"jsonrpc":"2.0","id":1}`)
	x := NewBuffered(b)
	head := make([]byte, 3)
	if _, err := io.ReadFull(x, head); err != nil {
		t.Fatal(err)
	}
	rest, err := ReadAll(x)
	if err != nil || !bytes.Equal(rest, b[3:]) || &rest[0] != &b[3] {
		t.Fatalf("ReadAll after 3 bytes = %q, %v; want the rest of the body itself", rest, err)
	}
	if again, err := ReadAll(x); err != nil || len(again) != 0 {
		t.Fatalf("ReadAll of a body already taken = %q, %v", again, err)
	}
	if got, err := ReadAll(iotest.OneByteReader(bytes.NewReader(b))); err != nil || !bytes.Equal(got, b) {
		t.Fatalf("ReadAll of a plain reader = %q, %v", got, err)
	}
}

// TestRereadReadsAgain: a body read to its end and handed on by Reread
// reads the bytes given from the start, the same Buffered when it was
// one, a new one otherwise.
func TestRereadReadsAgain(t *testing.T) {
	b := []byte(`{"jsonrpc":"2.0","id":1}`)
	x := NewBuffered(b)
	taken, _ := ReadAll(x)
	again := Reread(x, taken)
	if again != io.ReadCloser(x) {
		t.Error("Reread of a Buffered body made a new one")
	}
	for _, body := range []io.ReadCloser{again, Reread(io.NopCloser(bytes.NewReader(nil)), b)} {
		if got, err := io.ReadAll(body); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("a body reread reads %q, %v; want %q", got, err, b)
		}
	}
}

// TestReadAllSizedIsReadAll: the body read into a buffer sized by its
// declared length is what io.ReadAll reads, whether the declaration is
// right, short, long or absent, and however the reader splits it.
func TestReadAllSizedIsReadAll(t *testing.T) {
	for _, size := range []int{0, 1, 511, 512, 513, 5000} {
		b := bytes.Repeat([]byte("ab"), size)[:size]
		for _, hint := range []int64{-1, 0, 1, int64(size) - 1, int64(size), int64(size) + 1, int64(size) * 2} {
			for _, r := range []io.Reader{bytes.NewReader(b), iotest.OneByteReader(bytes.NewReader(b)), iotest.DataErrReader(bytes.NewReader(b))} {
				got, err := readAll(r, hint)
				if err != nil || !bytes.Equal(got, b) {
					t.Fatalf("size %d, hint %d: read %d bytes, %v", size, hint, len(got), err)
				}
			}
		}
		got, err := readAll(iotest.TimeoutReader(bytes.NewReader(b)), int64(size))
		if size > 0 && err == nil {
			t.Fatalf("size %d: a read error was not returned (%d bytes)", size, len(got))
		}
	}
}
