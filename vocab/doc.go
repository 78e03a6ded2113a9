// Package vocab is the published decline vocabulary and the terms the
// rulebook and the composer share: the slugs and their entries, the
// suggestion kinds, the disclosure levels, the public grounds a fired rule
// hands the composer, and the publisher's voice with its template
// language.
//
// It is the bottom of the decline pipeline. merch, decline, outcome, the
// ledger, the stores, the console and the transports all import it; it
// imports only adcp and the standard library, so a slug is one type from
// the rulebook to the wire and an unknown one does not compile.
//
// It holds no mutable exported state: the table and its lists are
// returned as copies, so no importer can change what every other one
// publishes.
package vocab
