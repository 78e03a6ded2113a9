package signing

import (
	"encoding/base64"

	"github.com/storefront/storefront/store"
)

// JWK is a public webhook-signing key as AdCP verifiers read it: an OKP
// Ed25519 key with its JOSE algorithm, for signature verification only,
// and its AdCP purpose.
type JWK struct {
	Kty     string   `json:"kty"`
	Crv     string   `json:"crv"`
	X       string   `json:"x"`
	Kid     string   `json:"kid"`
	Alg     string   `json:"alg"`
	Use     string   `json:"use"`
	KeyOps  []string `json:"key_ops"`
	AdcpUse string   `json:"adcp_use"`
}

// JWKS is a JSON Web Key Set (RFC 7517).
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// PublicJWK is k's public half. It has no field that could hold the
// private key.
func PublicJWK(k store.SigningKey) JWK {
	return JWK{
		Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k.Public),
		Kid: k.KID, Alg: JWKAlgorithm, Use: "sig", KeyOps: []string{"verify"}, AdcpUse: Purpose,
	}
}
