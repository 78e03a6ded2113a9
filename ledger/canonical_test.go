package ledger

import (
	"encoding/json"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/storefront/storefront/vocab"
)

// TestCanonicalIsMarshal: the hand-written canonical bytes are json.Marshal
// of canonical, for every member set or not and strings that need
// escaping, so that chains hashed before still verify.
func TestCanonicalIsMarshal(t *testing.T) {
	str := rapid.StringOfN(rapid.SampledFrom([]rune("ab09 <>&\"\\\u2028é\x01\x7f")), 0, 10, -1)
	rapid.Check(t, func(t *rapid.T) {
		var ids []string
		if rapid.Bool().Draw(t, "has ids") {
			ids = rapid.SliceOfN(str, 0, 3).Draw(t, "ids")
		}
		e := Entry{
			Record: Record{
				Publisher: str.Draw(t, "publisher"), Account: str.Draw(t, "account"), Principal: str.Draw(t, "principal"),
				RequestDigest: str.Draw(t, "request"), RulebookVersion: rapid.Int64().Draw(t, "rulebook"),
				Task: rapid.SampledFrom([]string{"", "create_media_buy", str.Draw(t, "task")}).Draw(t, "task kind"),
				Arm:  str.Draw(t, "arm"), Slug: vocab.Slug(str.Draw(t, "slug")), RuleIDs: ids,
				ResponseDigest: str.Draw(t, "response"), Sandbox: rapid.Bool().Draw(t, "sandbox"), Forced: rapid.Bool().Draw(t, "forced"),
			},
			Sequence: rapid.Int64().Draw(t, "sequence"),
			Time:     time.Unix(rapid.Int64Range(-1e11, 1e11).Draw(t, "s"), rapid.Int64Range(0, 999999999).Draw(t, "ns")).In(time.FixedZone("x", 3600)),
			PrevHash: str.Draw(t, "prev"),
		}
		want := ids
		if want == nil {
			want = []string{}
		}
		ref, err := json.Marshal(canonical{
			V: 1, Publisher: e.Publisher, Sequence: e.Sequence, Time: e.Time.UTC().Format(time.RFC3339Nano),
			Account: e.Account, Principal: e.Principal, RequestDigest: e.RequestDigest,
			RulebookVersion: e.RulebookVersion, Task: e.Task, Arm: e.Arm, Slug: string(e.Slug), RuleIDs: want,
			ResponseDigest: e.ResponseDigest, Sandbox: e.Sandbox, Forced: e.Forced, PrevHash: e.PrevHash,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Canonical(); string(got) != string(ref) {
			t.Fatalf("wrote\n%s\njson.Marshal writes\n%s", got, ref)
		}
	})
}
