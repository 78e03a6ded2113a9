package sanitize

import (
	_ "embed"
	"strings"
)

// wordList holds the skeletons of the lower-case words of ordinary
// English writing, one a line, sorted (generated with the table; see
// CommonWordsSource). A word whose skeleton is one of them is common: it
// identifies nothing on its own.
//
//go:embed commonwords.txt
var wordList string

// isCommonSkeleton reports whether sk is the skeleton of a common word. It
// binary-searches the embedded list in place: no index is built.
func isCommonSkeleton(sk string) bool {
	lo, hi := 0, len(wordList)
	for lo < hi {
		mid := (lo + hi) / 2
		// The line that holds byte mid.
		start := strings.LastIndexByte(wordList[:mid], '\n') + 1
		end := start + strings.IndexByte(wordList[start:], '\n')
		switch w := wordList[start:end]; {
		case w == sk:
			return true
		case w < sk:
			lo = end + 1
		default:
			hi = start
		}
	}
	return false
}

// Common reports whether word identifies nothing on its own: a word of
// ordinary English by the word list, read by its skeleton (so "Reteli"
// is "retell" and "C0ll1e" is "collie"), or of the advertising vocabulary
// a note may capitalise. A word of a confidential field that is common is
// no term alone; the field's whole phrases still are.
func Common(word string) bool {
	return common[strings.ToLower(word)] || isCommonSkeleton(Skeleton(word))
}
