// Package mediabuy is the media-buy domain: a buy and its packages, the
// state machine that derives a buy's status from its stored facts and the
// clock, the terms a package is judged on by the rulebook (the same brief
// get_products builds for the same terms), the requests that create, update
// and read buys, delivery aggregation, and the wire shapes of the answers.
//
// It is pure: it reads no store and no clock of its own, and every time it
// needs is passed in. It must never judge a package any other way than
// get_products would judge the same terms, and never invent delivery: the
// figures it reports are sums of rows someone reported.
package mediabuy
