package adcp

import "slices"

// Code is an AdCP error code (enums/error-code.json).
type Code string

// Recovery is the AdCP recovery class of an error.
type Recovery string

const (
	Transient   Recovery = "transient"
	Correctable Recovery = "correctable"
	Terminal    Recovery = "terminal"
)

// The error codes the storefront emits. Each has exactly one recovery class,
// taken from the enumMetadata block of the official enumeration.
const (
	InvalidRequest      Code = "INVALID_REQUEST"
	ValidationError     Code = "VALIDATION_ERROR"
	VersionUnsupported  Code = "VERSION_UNSUPPORTED"
	ServiceUnavailable  Code = "SERVICE_UNAVAILABLE"
	BudgetTooLow        Code = "BUDGET_TOO_LOW"
	PolicyViolation     Code = "POLICY_VIOLATION"
	UnsupportedFeature  Code = "UNSUPPORTED_FEATURE"
	ProductUnavailable  Code = "PRODUCT_UNAVAILABLE"
	ProductNotFound     Code = "PRODUCT_NOT_FOUND"
	ProposalNotFound    Code = "PROPOSAL_NOT_FOUND"
	AccountNotFound     Code = "ACCOUNT_NOT_FOUND"
	AuthMissing         Code = "AUTH_MISSING"
	AuthInvalid         Code = "AUTH_INVALID"
	PermissionDenied    Code = "PERMISSION_DENIED"
	IdempotencyConflict Code = "IDEMPOTENCY_CONFLICT"
	IdempotencyExpired  Code = "IDEMPOTENCY_EXPIRED"
	IdempotencyInFlight Code = "IDEMPOTENCY_IN_FLIGHT"
	ReferenceNotFound   Code = "REFERENCE_NOT_FOUND"
	RateLimited         Code = "RATE_LIMITED"
	Forbidden           Code = "FORBIDDEN"
	UnknownScenario     Code = "UNKNOWN_SCENARIO"
	InvalidParams       Code = "INVALID_PARAMS"
	InternalError       Code = "INTERNAL_ERROR"
	StaleResponse       Code = "STALE_RESPONSE"

	// The media-buy and account tasks'.
	MediaBuyNotFound         Code = "MEDIA_BUY_NOT_FOUND"
	PackageNotFound          Code = "PACKAGE_NOT_FOUND"
	NotCancellable           Code = "NOT_CANCELLABLE"
	InvalidState             Code = "INVALID_STATE"
	TermsRejected            Code = "TERMS_REJECTED"
	Conflict                 Code = "CONFLICT"
	AccountSuspended         Code = "ACCOUNT_SUSPENDED"
	AccountPaymentRequired   Code = "ACCOUNT_PAYMENT_REQUIRED"
	AccountSetupRequired     Code = "ACCOUNT_SETUP_REQUIRED"
	BillingNotSupported      Code = "BILLING_NOT_SUPPORTED"
	PaymentTermsNotSupported Code = "PAYMENT_TERMS_NOT_SUPPORTED"
	UnsupportedProvisioning  Code = "UNSUPPORTED_PROVISIONING"

	// A registered governance agent's answer to a buy.
	GovernanceDenied      Code = "GOVERNANCE_DENIED"
	GovernanceUnavailable Code = "GOVERNANCE_UNAVAILABLE"
)

// recoveries is the one table from code to recovery class.
var recoveries = map[Code]Recovery{
	InvalidRequest:      Correctable,
	ValidationError:     Correctable,
	VersionUnsupported:  Correctable,
	ServiceUnavailable:  Transient,
	BudgetTooLow:        Correctable,
	PolicyViolation:     Correctable,
	UnsupportedFeature:  Correctable,
	ProductUnavailable:  Correctable,
	ProductNotFound:     Correctable,
	ProposalNotFound:    Correctable,
	AccountNotFound:     Terminal,
	AuthMissing:         Correctable,
	AuthInvalid:         Terminal,
	PermissionDenied:    Correctable,
	IdempotencyConflict: Correctable,
	IdempotencyExpired:  Correctable,
	IdempotencyInFlight: Transient,
	ReferenceNotFound:   Correctable,
	RateLimited:         Transient,
	Forbidden:           Correctable,
	UnknownScenario:     Correctable,
	InvalidParams:       Correctable,
	InternalError:       Transient,
	StaleResponse:       Transient,

	MediaBuyNotFound:         Correctable,
	PackageNotFound:          Correctable,
	NotCancellable:           Correctable,
	InvalidState:             Correctable,
	TermsRejected:            Correctable,
	Conflict:                 Transient,
	AccountSuspended:         Terminal,
	AccountPaymentRequired:   Terminal,
	AccountSetupRequired:     Correctable,
	BillingNotSupported:      Correctable,
	PaymentTermsNotSupported: Correctable,
	UnsupportedProvisioning:  Correctable,
	GovernanceDenied:         Correctable,
	GovernanceUnavailable:    Transient,
}

// Recovery returns the recovery class of c. Codes outside the table are
// treated as terminal: a buyer should not retry what it cannot classify.
func (c Code) Recovery() Recovery {
	if r, ok := recoveries[c]; ok {
		return r
	}
	return Terminal
}

// Codes lists the error codes the storefront emits, sorted.
func Codes() []string {
	out := make([]string, 0, len(recoveries))
	for c := range recoveries {
		out = append(out, string(c))
	}
	slices.Sort(out)
	return out
}
