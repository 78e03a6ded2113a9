package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/internal/recovery"
)

// Reconnection backoff of a Changes listener.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 10 * time.Second
)

// Changes listens on the storefront_changes channel over a connection of
// its own (a LISTEN belongs to one session, so it cannot borrow from the
// pool) and forwards the publisher id of each notice. Every write to a
// catalogue, a rulebook or publisher settings notifies in its transaction,
// so notices arrive from this process and from every other replica, after
// commit.
//
// The first LISTEN is issued before Changes returns, so a write made after
// the call is seen. If the connection drops, the listener reconnects with
// backoff and then reports every publisher once, since notices sent while
// it was away are lost. The channel closes when ctx ends or the store
// closes.
func (s *Store) Changes(ctx context.Context) <-chan string {
	ch := make(chan string, 16)
	s.mu.Lock()
	if s.isClosed {
		s.mu.Unlock()
		close(ch)
		return ch
	}
	s.listeners.Add(1)
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closed, cancel)
	conn, err := s.listen(ctx)
	if err != nil && ctx.Err() == nil {
		s.log.Warn("listening for store changes failed; retrying", "err", err)
	}
	go func() {
		defer s.listeners.Done()
		defer close(ch)
		defer stop()
		defer cancel()
		// A panic while forwarding is logged and counted, and forwarding
		// starts again after a pause, on a new connection and with a
		// resync, as after a lost connection.
		backoff := minBackoff
		for recovery.Run(ctx, s.log, "background", "forwarding store changes", func() { s.forward(ctx, conn, ch) }) {
			conn = nil
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(backoff*2, maxBackoff)
		}
	}()
	return ch
}

// listen opens a connection and subscribes it.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	cfg := s.pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	// Named so that operators (and tests) can find it in pg_stat_activity.
	cfg.RuntimeParams["application_name"] = "storefront-changes"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The channel name is an identifier, which LISTEN cannot take as a
	// parameter; it is a constant.
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		closeConn(conn)
		return nil, err
	}
	return conn, nil
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

// forward relays notices from conn to ch until ctx ends, reconnecting
// whenever conn is nil or fails.
func (s *Store) forward(ctx context.Context, conn *pgx.Conn, ch chan<- string) {
	defer func() {
		if conn != nil {
			closeConn(conn)
		}
	}()
	backoff := minBackoff
	for {
		if conn == nil {
			var err error
			conn, err = s.listen(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				s.log.Warn("reconnecting to listen for store changes", "err", err, "retry_in", backoff)
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
					return
				}
				backoff = min(backoff*2, maxBackoff)
				continue
			}
			backoff = minBackoff
			s.log.Info("listening for store changes again")
			if !s.resync(ctx, ch) {
				return
			}
		}
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			closeConn(conn)
			conn = nil
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("lost the connection listening for store changes", "err", err)
			continue
		}
		select {
		case ch <- n.Payload:
		case <-ctx.Done():
			return
		}
	}
}

// resync reports every publisher as changed. Listing them can fail as
// the database comes back; it is retried with backoff until it succeeds,
// each failure logged and counted (ResyncFailures), because a resync
// skipped would leave edits made while the listener was away unheard. It
// returns false once ctx has ended.
func (s *Store) resync(ctx context.Context, ch chan<- string) bool {
	backoff := minBackoff
	for {
		pubs, err := s.listPublishers(ctx)
		if err == nil {
			for _, p := range pubs {
				select {
				case ch <- p.ID:
				case <-ctx.Done():
					return false
				}
			}
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		s.resyncFailures.Add(1)
		s.log.Warn("listing publishers to resync after reconnecting failed; retrying", "err", err, "retry_in", backoff)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return false
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// ResyncFailures counts failed attempts to list publishers after a
// change listener reconnected, since the store opened.
func (s *Store) ResyncFailures() int64 { return s.resyncFailures.Load() }
