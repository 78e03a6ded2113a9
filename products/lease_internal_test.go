package products

import "testing"

// TestReleaseGivesBackOnce: a Result's Release hands its buffer back on
// the first call only, since by a second the buffer may be another
// answer's; a buffer grown past maxLent is not kept.
func TestReleaseGivesBackOnce(t *testing.T) {
	var given []*lease
	was := giveBack
	giveBack = func(l *lease) { given = append(given, l) }
	t.Cleanup(func() { giveBack = was })

	l := &lease{}
	release := l.hold(make([]byte, 10, 64))
	release()
	release()
	if len(given) != 1 || given[0] != l {
		t.Fatalf("two Releases gave back %d leases", len(given))
	}
	big := &lease{}
	big.hold(make([]byte, 0, maxLent+1))()
	if len(given) != 1 {
		t.Fatal("a buffer past maxLent was kept")
	}
	if (*lease)(nil).hold(nil) != nil {
		t.Fatal("no lease has a Release")
	}
}
