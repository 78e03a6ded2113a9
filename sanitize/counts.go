package sanitize

import "sync/atomic"

// withheld counts, for the whole process, what the screen held back
// because it named a deny-listed term. It counts, never records: which
// term matched is not kept anywhere, so the counts can be published as
// metrics.
var withheld struct {
	lines, sentences, texts atomic.Uint64
}

// Withheld returns how many single lines the screen has dropped, how many
// sentences it has dropped from prose, and how many whole texts it has
// replaced with their fallback, since the process started, because they
// named a deny-listed term. Previews and lint are counted with buyer
// answers.
func Withheld() (lines, sentences, texts uint64) {
	return withheld.lines.Load(), withheld.sentences.Load(), withheld.texts.Load()
}
