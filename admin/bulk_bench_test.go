package admin_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/bulk"
	"github.com/storefront/storefront/internal/traffic"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// writeCatalogue writes n products as a JSON Lines file, one at a time.
func writeCatalogue(b *testing.B, n int) (string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "catalogue.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		p := fresh(i)
		p.Description = fmt.Sprintf("%s Product %d of a generated catalogue.", p.Description, i)
		if _, err := w.Write(bulk.EncodeProduct(p)); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	return path, st.Size()
}

// heapPeak samples the heap in use every 10 ms until stop is called, and
// returns the highest figure seen.
func heapPeak() (stop func() uint64) {
	var (
		peak atomic.Uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// BenchmarkImport100k imports a 100,000-product JSON Lines file through the
// admin API, streamed from disk, and reports the heap in use before the
// import and at its peak. On PostgreSQL the products stream through into
// the database, so the peak does not grow with the file; the in-memory
// store holds the catalogue it serves in memory by design.
//
//	STOREFRONT_TEST_DATABASE_URL=postgres://… go test ./admin -run '^$' -bench Import100k -benchtime 1x -timeout 30m
func BenchmarkImport100k(b *testing.B) {
	n := 100_000
	if s := os.Getenv("STOREFRONT_IMPORT_PRODUCTS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	path, size := writeCatalogue(b, n)
	for _, name := range []string{"postgres", "memory"} {
		b.Run(name, func(b *testing.B) {
			var s store.Store = memstore.New()
			if name == "postgres" {
				s = pgtest.Open(b)
			}
			clock := &traffic.Clock{T: time.Date(2031, 3, 2, 9, 0, 0, 0, time.UTC)}
			c, _ := serve(b, s, clock)
			for range b.N {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := heapPeak()
				start := time.Now()
				req, _ := http.NewRequest("POST", c.base+pub+"/catalogue/import?mode=replace", f)
				req.Header.Set("Authorization", "Bearer "+c.token)
				req.Header.Set("Content-Type", "application/x-ndjson")
				req.Header.Set("If-Match", c.version(b))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				took := time.Since(start)
				peak := stop()
				f.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("import = %d %s", resp.StatusCode, body)
				}
				b.ReportMetric(float64(size)/(1<<20), "file-MiB")
				b.ReportMetric(float64(before.HeapInuse)/(1<<20), "heap-before-MiB")
				b.ReportMetric(float64(peak)/(1<<20), "heap-peak-MiB")
				b.ReportMetric(float64(n)/took.Seconds(), "products/s")
			}
		})
	}
}
