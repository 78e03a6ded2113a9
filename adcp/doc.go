// Package adcp holds the protocol facts the rest of the storefront is built
// on: the releases it serves and how a buyer's pin is negotiated, the error
// codes with their recovery classes, and the enumerations (channels, format
// kinds, delivery types) the catalogue and rulebook speak in.
//
// Each fact is defined here once. Capabilities, schemas and docs are
// generated from these definitions, never copied by hand. The package must
// not import any other storefront package.
package adcp
