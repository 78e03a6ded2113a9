package store

import (
	"context"
	"time"

	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/vocab"
)

// AccountTerms are what sync_accounts records about an account beyond its
// natural key: who is invoiced, on what terms, on which clock, and whether
// it may buy.
type AccountTerms struct {
	Account      string    `json:"account_id"`
	Billing      string    `json:"billing"`
	PaymentTerms string    `json:"payment_terms,omitempty"`
	Timezone     string    `json:"timezone"`
	Status       string    `json:"status"`
	Revision     int64     `json:"revision"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// Order statuses.
const (
	OrderPending  = "pending"
	OrderApproved = "approved"
	OrderDeclined = "declined"
)

// Order is a create_media_buy waiting for the publisher: the buy it would
// create, why it waits, and once decided, the decision. Its id is the id of
// the task the buyer polls.
type Order struct {
	TaskID string    `json:"task_id"`
	Owner  TaskOwner `json:"owner"`
	Status string    `json:"status"`
	// Buy is the buy approval creates, its id already reserved.
	Buy mediabuy.Buy `json:"buy"`
	// Review names, for the publisher only, what sent it to the desk:
	// review rules (by id and name) or the account's trust tier.
	Review []string `json:"review"`
	// RulebookVersion is the rulebook the buy was judged against.
	RulebookVersion int64 `json:"rulebook_version"`
	// Version is the AdCP release the buyer was served; the task's
	// result is written in it.
	Version   string    `json:"adcp_version"`
	CreatedAt time.Time `json:"created_at"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	// DecidedBy is the admin token's name that decided it.
	DecidedBy string `json:"decided_by,omitempty"`
	// Slug and Reason are what a decline told the buyer.
	Slug   vocab.Slug `json:"slug,omitempty"`
	Reason string     `json:"reason,omitempty"`
}

// Decision settles an order. On approval the store creates Buy with its
// first history entry; either way it finishes the order's task with Result
// (status TaskStatus) in the same transaction, so an order is decided
// exactly once and its task never disagrees with it.
type Decision struct {
	TaskID     string
	Status     string // OrderApproved or OrderDeclined
	By         string
	At         time.Time
	Slug       vocab.Slug
	Reason     string
	TaskStatus string
	Result     []byte
	// Created is the history entry of an approved buy.
	Created mediabuy.Event
}

// BuyFilter selects buys. Empty fields do not constrain; a buyer's read
// always names an account or a principal.
type BuyFilter struct {
	Account   string
	Principal string
	IDs       []string
}

// MediaBuys stores what the media-buy tasks and the order desk need:
// account terms, buys with their history, orders and delivery rows. Every
// method is scoped to one publisher and keeps the rules every role keeps
// (roles.go): an unknown publisher is ErrNotFound.
type MediaBuys interface {
	// AccountTerms returns an account's terms (ErrNotFound: none yet).
	AccountTerms(ctx context.Context, publisher, account string) (AccountTerms, error)
	// PutAccountTerms creates or replaces an account's terms.
	PutAccountTerms(ctx context.Context, publisher string, t AccountTerms) error

	// CreateBuy stores a new buy and its first history entry (ErrExists:
	// the id is taken).
	CreateBuy(ctx context.Context, publisher string, b mediabuy.Buy, created mediabuy.Event) error
	// Buy returns a buy by id (ErrNotFound).
	Buy(ctx context.Context, publisher, id string) (mediabuy.Buy, error)
	// Buys lists the buys f selects, oldest first.
	Buys(ctx context.Context, publisher string, f BuyFilter) ([]mediabuy.Buy, error)
	// UpdateBuy replaces a buy whose stored revision is still revision,
	// appending events (ErrConflict: it changed meanwhile; ErrNotFound).
	UpdateBuy(ctx context.Context, publisher string, b mediabuy.Buy, revision int64, events []mediabuy.Event) error
	// History returns a buy's history, oldest first, at most the newest
	// limit entries (all when limit <= 0). ErrNotFound: no such buy.
	History(ctx context.Context, publisher, id string, limit int) ([]mediabuy.Event, error)

	// CreateOrder stores a pending order and its submitted task together
	// (ErrExists: the task id is taken for that owner).
	CreateOrder(ctx context.Context, publisher string, o Order, t Task) error
	// Order returns one order (ErrNotFound).
	Order(ctx context.Context, publisher, taskID string) (Order, error)
	// Orders lists orders with the status ("" for all), newest first.
	Orders(ctx context.Context, publisher, status string) ([]Order, error)
	// DecideOrder settles a pending order (ErrConflict: already decided;
	// ErrNotFound) and returns its finished task.
	DecideOrder(ctx context.Context, publisher string, d Decision) (Task, error)

	// ReportDelivery stores delivery rows, all or nothing: an ad-server
	// row replaces the row of its package, day and source, a simulated
	// row adds to it. Every row's buy and package must exist
	// (ErrNotFound).
	ReportDelivery(ctx context.Context, publisher string, rows []mediabuy.Row) error
	// Delivery returns the rows of the buys, in date order.
	Delivery(ctx context.Context, publisher string, buyIDs []string) ([]mediabuy.Row, error)
}

// DeliveryKey is what makes a delivery row one row.
func DeliveryKey(r mediabuy.Row) [4]string {
	return [4]string{r.MediaBuyID, r.PackageID, r.Date.String(), r.Source}
}

// MergeDelivery folds r into an existing row under the same key: a
// simulated row adds, an ad-server row replaces.
func MergeDelivery(existing *mediabuy.Row, r mediabuy.Row) mediabuy.Row {
	if existing == nil || r.Source != mediabuy.Simulated {
		return r
	}
	out := *existing
	out.Metrics.Add(r.Metrics)
	out.ReportedAt = r.ReportedAt
	return out
}
