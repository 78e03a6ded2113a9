package sanitize

import "sync"

// constant is the type of Const's parameter. It is unexported, so outside
// this package nothing can be declared of it, and the only arguments Const
// accepts are untyped string constants: Const("a fixed line") compiles,
// while Const(s) for a string variable s, or a typed string constant, does
// not ("cannot use s (variable of type string) as constant value"). This is
// the compiler's check, so no test can call Const with a variable to see it
// refused; TestConstRefusesAVariable type-checks such a call instead.
type constant string

// consts holds the Text of each constant Const has screened.
var consts sync.Map // string -> Text

// Const is the Text of a fixed line the storefront writes itself: a string
// constant in the code, which can hold nothing a request or a publisher
// supplied, such as an error message or a field name.
//
// It is still screened, with the vendor screen, once per text: a fixed line
// that named a vendor would leak as surely as any other. What the screen
// makes of it is what Const returns, and the zero Text if it drops the line,
// exactly as the screen's Line would answer. A constant the screen changes
// is a mistake in the code, not something to handle where it is used:
// TestConstantsPassTheVendorScreen reads every call of Const in the
// module's source and fails for any constant the vendor screen would
// change, so the fallback never runs.
func Const(s constant) Text {
	if t, ok := consts.Load(string(s)); ok {
		return t.(Text)
	}
	t, _ := Vendor().Line(string(s), 0)
	consts.Store(string(s), t)
	return t
}
