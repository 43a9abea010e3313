package main

import (
	"os"
	"strings"
	"testing"
)

func manifest(t *testing.T) string {
	text, err := os.ReadFile("../../docs/k8s/compare-indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func TestTheShippedManifestsPass(t *testing.T) {
	for _, path := range []string{"../../docs/k8s/compare-indexed-job.yaml", "../../docs/k8s/compare-merge-job.yaml"} {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checkFile(text); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// Each mistake the check is there for fails it.
func TestMistakesFail(t *testing.T) {
	cases := map[string][2]string{
		"a misspelled field":         {"completionMode: Indexed", "completionMod: Indexed"},
		"not indexed":                {"completionMode: Indexed", "completionMode: NonIndexed"},
		"shares against completions": {"/2\n", "/3\n"},
		"no share from the index":    {"$((JOB_COMPLETION_INDEX + 1))/2", "1/2"},
		"no engine of its own":       {"privileged: true", "privileged: false"},
		"unequal parallelism":        {"parallelism: 2", "parallelism: 1"},
		"a field in the wrong place": {"  backoffLimit: 0", "  backoffLimit: 0\n  privileged: true"},
	}
	for name, change := range cases {
		text := manifest(t)
		if !strings.Contains(text, change[0]) {
			t.Fatalf("%s: the manifest has no %q", name, change[0])
		}
		broken := strings.Replace(text, change[0], change[1], 1)
		if _, err := checkFile([]byte(broken)); err == nil {
			t.Errorf("%s: passed", name)
		} else {
			t.Logf("%s: %v", name, trimmed([]byte(err.Error())))
		}
	}
}
