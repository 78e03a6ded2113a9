package admin

import (
	"bytes"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/problem"
)

func decodeStrict(b []byte, v any) error {
	if err := problem.Decode(b, v); err != nil {
		return invalid(err, "")
	}
	return nil
}

func problemField(pointer, detail string) error {
	return problem.Invalid{{Pointer: pointer, Detail: detail}}
}

// decodeBody reads the request body and decodes it strictly into v. An
// empty body leaves v as it is, for requests whose fields are all
// optional.
func decodeBody(c echo.Context, v any) error {
	b, err := body(c)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return err
	}
	return decodeStrict(b, v)
}
