package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/bulk"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// cli runs the binary with args and extra environment and returns its
// output and exit status.
func cli(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

// TestCLIHelpAndBadValues: asking for help is success, for the bench
// commands too; a log level or a boolean environment variable the program
// does not understand is refused, not silently taken as a default.
func TestCLIHelpAndBadValues(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"bench", "--help"}, {"bench", "load", "--help"}, {"catalogue", "import", "--help"}, {"ledger", "export", "-h"}} {
		if _, errOut, code := cli(t, nil, args...); code != 0 || !strings.Contains(errOut, "usage") && !strings.Contains(errOut, "Usage") {
			t.Errorf("%v exits %d; want 0 and the usage\n%s", args, code, errOut)
		}
	}
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"serve", "--log-level", "loud"}, `--log-level "loud"`},
		{[]string{"STOREFRONT_SANDBOX=maybe"}, []string{"serve"}, "STOREFRONT_SANDBOX=maybe"},
		{[]string{"STOREFRONT_LOG_JSON=perhaps"}, []string{"ledger", "verify"}, "STOREFRONT_LOG_JSON=perhaps"},
		// Without a database there is nothing to verify: say so, never
		// "all is well".
		{[]string{"DATABASE_URL="}, []string{"ledger", "verify"}, "DATABASE_URL"},
		{[]string{"DATABASE_URL="}, []string{"audit", "verify"}, "DATABASE_URL"},
		{nil, []string{"serve", "--retention", "tasks=forever"}, "--retention"},
		{nil, []string{"serve", "--retention", "replays=1h"}, "replay window"},
	} {
		_, errOut, code := cli(t, c.env, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v %v exits %d with %q; want a refusal naming %s", c.env, c.args, code, errOut, c.want)
		}
	}
}

// TestServeSaysWhichProcessServes: go run starts the program as a child,
// so serve prints its own process id, which is the one to stop.
func TestServeSaysWhichProcessServes(t *testing.T) {
	sf := Start(t, nil)
	m := regexp.MustCompile(`storefront serving at (\S+) \(process (\d+); stop it with Ctrl-C or kill (\d+)\)`).FindStringSubmatch(sf.Output())
	if m == nil || m[1] != sf.BaseURL || m[2] != strconv.Itoa(sf.cmd.Process.Pid) || m[3] != m[2] {
		t.Fatalf("serve does not name its process %d:\n%s", sf.cmd.Process.Pid, sf.Output())
	}
}

// TestSecondSeedDemoStart: a second --seed-demo start on a database that
// has the demo already says where its tokens went and how to make one.
func TestSecondSeedDemoStart(t *testing.T) {
	db := pgtest.NewDatabase(t)
	env := []string{"DATABASE_URL=" + db}
	first := Start(t, env, "--seed-demo")
	if !strings.Contains(first.Output(), "demo admin token") {
		t.Fatalf("the first start prints no token:\n%s", first.Output())
	}
	second := Start(t, env, "--seed-demo")
	out := second.Output()
	if strings.Contains(out, "demo admin token (") || !strings.Contains(out, "already in the database") ||
		!strings.Contains(out, "storefront admin token create --publisher "+demo.PublisherID) {
		t.Errorf("the second start does not explain where the tokens are:\n%s", out)
	}
}

// spelled writes i in base 4 with the letters j, q, x and z, six of them:
// an id no secret or vendor of the demo spells.
func spelled(i int) string {
	const digits = "jqxz"
	out := make([]byte, 6)
	for k := len(out) - 1; k >= 0; k-- {
		out[k] = digits[i%4]
		i /= 4
	}
	return string(out)
}

// TestCatalogueImportCommand imports a file of 2,000 products with two bad
// lines from the command line: refused whole with both lines named, then
// saved without them when asked, with progress on stderr and every bad
// line in the report file; the catalogue and the ledger export back.
func TestCatalogueImportCommand(t *testing.T) {
	sf := Start(t, nil)
	dir := t.TempDir()
	file := filepath.Join(dir, "catalogue.jsonl")
	var b bytes.Buffer
	base := demo.Products()
	for i := range 2000 {
		p := base[i%len(base)]
		// Ids in letters: a number such as 0412 is a fragment of the demo's
		// confidential rule ids, which the screen refuses to serve.
		p.ProductID = "cli-" + spelled(i)
		p.InternalRef = ""
		switch i {
		case 700:
			b.WriteString(`{"product_id":"cli-` + spelled(i) + `","name":` + "\n")
			continue
		case 1500:
			p.Countries = []string{"Narnia"}
		}
		b.Write(bulk.EncodeProduct(p))
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"STOREFRONT_URL=" + sf.BaseURL, "STOREFRONT_ADMIN_TOKEN=" + adminToken(t, sf)}

	out, errOut, code := cli(t, env, "catalogue", "import", file)
	if code != 1 || !strings.Contains(errOut, "line 701: (the line):") || !strings.Contains(errOut, "line 1501: /countries/0:") ||
		!strings.Contains(errOut, "nothing was saved") || strings.Contains(out, "saved as") {
		t.Fatalf("import with bad lines: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	report := filepath.Join(dir, "bad-lines.csv")
	out, errOut, code = cli(t, env, "catalogue", "import", "--skip-bad-lines", "--note", "nightly feed", "--report", report, file)
	if code != 0 || !strings.Contains(out, "saved as catalogue version") || !strings.Contains(out, "2000 lines read, 1998 products") ||
		!strings.Contains(out, "2 bad lines left out") {
		t.Fatalf("import skipping bad lines: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if !regexp.MustCompile(`importing \S+catalogue\.jsonl: 100% of [0-9.]+ (KiB|MiB) sent, 2000 lines checked, 2 bad`).MatchString(errOut) {
		t.Errorf("the import shows no progress:\n%s", errOut)
	}
	f, err := os.Open(report)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 3 || rows[1][0] != "701" || rows[2][0] != "1501" || rows[2][1] != "/countries/0" {
		t.Errorf("the report = %v (%v)", rows, err)
	}

	exported := filepath.Join(dir, "export.csv")
	if _, errOut, code := cli(t, env, "catalogue", "export", "--format", "csv", "--out", exported); code != 0 {
		t.Fatalf("catalogue export: %d %s", code, errOut)
	}
	data, _ := os.ReadFile(exported)
	if n := strings.Count(string(data), "\ncli-"); n != 1998 {
		t.Errorf("the export holds %d imported products, want 1998", n)
	}
	getProducts(t, sf.BaseURL, "", displayBrief)
	out, errOut, code = cli(t, env, "ledger", "export", "--arm", "completed")
	if code != 0 || strings.Count(out, "\n") < 1 || !strings.Contains(out, `"arm":"completed"`) {
		t.Errorf("ledger export: %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := cli(t, env, "ledger", "export", "--arm", "sideways"); code == 0 || !strings.Contains(errOut, "arm") {
		t.Errorf("ledger export --arm sideways: %d %s", code, errOut)
	}
}
