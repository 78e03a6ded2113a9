package admin

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// sameOrigin refuses state-changing requests that a browser made on behalf
// of another site. Admin requests authenticate with a bearer header, which
// browsers never attach on their own, so a cross-site form or script
// cannot act as a publisher anyway; this is the second lock. Browsers mark
// their requests (Sec-Fetch-Site, or failing that Origin); clients that
// are not browsers send neither and are let through.
func sameOrigin() echo.MiddlewareFunc {
	cop := http.NewCrossOriginProtection()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := cop.Check(c.Request()); err != nil {
				return newProblem(http.StatusForbidden, "cross-origin", "Cross-origin request refused",
					"the admin API accepts changes only from pages on its own origin")
			}
			return next(c)
		}
	}
}
