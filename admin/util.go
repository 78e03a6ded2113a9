package admin

import "github.com/storefront/storefront/problem"

func decodeStrict(b []byte, v any) error {
	if err := problem.Decode(b, v); err != nil {
		return invalid(err, "")
	}
	return nil
}

func problemField(pointer, detail string) error {
	return problem.Invalid{{Pointer: pointer, Detail: detail}}
}
