package agent

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/webhook"
)

// Curator decides the briefs the storefront accepts as tasks (the
// products.Curation of --async-discovery): in the background, through the
// same pipeline, then finishes the task with the answer and delivers the
// task's webhook. The pipeline always answers (a failure is the error
// arm), so every accepted task finishes.
type Curator struct {
	// Store is where each task is finished (FinishTask).
	Store    store.AsyncTasks
	Webhooks *webhook.Sender
	// Timeout bounds one decision.
	Timeout time.Duration
	Now     func() time.Time
	Log     *slog.Logger

	wg sync.WaitGroup
}

var _ products.Curation = (*Curator)(nil)

// Curate implements products.Curation.
func (c *Curator) Curate(publisher string, sub products.Submission, decide func(context.Context) products.Result) {
	// Under a recover boundary, which has logged and counted a panic
	// before Wait sees the decision done.
	c.wg.Go(func() {
		recovery.Run(context.Background(), c.Log, "background", "curating task "+sub.TaskID, func() { c.curate(publisher, sub, decide) })
	})
}

// curate decides one submitted brief and finishes its task.
func (c *Curator) curate(publisher string, sub products.Submission, decide func(context.Context) products.Result) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// A decision that panics still finishes its task: failed, with the
	// answer a call that panics gets.
	status, payload := "failed", internalReply(sub.Request).Payload
	recovery.Run(ctx, c.Log, "background", "deciding task "+sub.TaskID, func() {
		res := decide(ctx)
		status, payload = res.Outcome.Arm().String(), res.Payload
	})
	owner := store.TaskOwner{Account: sub.Account, Principal: sub.Principal}
	t, err := c.Store.FinishTask(ctx, publisher, owner, sub.TaskID, status, payload, clock.Read(c.Now))
	if errors.Is(err, store.ErrConflict) {
		// Already finished, by the compliance controller in sandbox.
		return
	}
	if err != nil {
		c.Log.Error("finishing a curated task failed", "publisher", publisher, "task", sub.TaskID, "err", err)
		return
	}
	if c.Webhooks != nil {
		c.Webhooks.Deliver(ctx, publisher, t)
	}
}

// Wait waits for decisions in flight, up to ctx.
func (c *Curator) Wait(ctx context.Context) {
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
