package app

import (
	"context"
	"expvar"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"runtime/metrics"
	"time"
)

// serveDebug serves pprof and expvar on their own listener, away from the
// buyer and admin surfaces, so profiles can be taken from a running
// storefront. expvar's memstats carry the heap figures the soak reads.
func serveDebug(ctx context.Context, addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("debug listener on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/vars", expvar.Handler())
	// /debug/gc runs a collection and reports the live heap it marked:
	// memory in use, without the garbage a busy process carries between
	// collections.
	mux.HandleFunc("/debug/gc", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		runtime.GC()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(sample)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"live_heap_bytes":%d}`+"\n", sample[0].Value.Uint64())
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("debug endpoints serving", "addr", ln.Addr().String(), "pprof", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() {
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}, nil
}
