// k8s-check validates the Kubernetes manifests in docs/k8s without a cluster and without
// downloading schemas: each document is decoded strictly into Kubernetes's own Go types
// (k8s.io/api), so a misspelled or misplaced field fails, and then held to what chaos needs of
// it: an Indexed Job whose pods each take their share from JOB_COMPLETION_INDEX, as many shares
// as completions, a Docker engine of their own, and a merge job.
//
//	go run . ../../docs/k8s/*.yaml
package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: k8s-check MANIFEST.yaml...")
		os.Exit(254)
	}
	failed := false
	for _, path := range os.Args[1:] {
		text, err := os.ReadFile(path)
		if err == nil {
			var summary []string
			summary, err = checkFile(text)
			if err == nil {
				fmt.Printf("%s: ok: %s\n", path, strings.Join(summary, "; "))
				continue
			}
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
		failed = true
	}
	if failed {
		os.Exit(1)
	}
}

// checkFile checks every document of a manifest file; it says what each one is.
func checkFile(text []byte) ([]string, error) {
	var summary []string
	for i, doc := range documents(text) {
		said, err := checkDocument(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		summary = append(summary, said)
	}
	if len(summary) == 0 {
		return nil, fmt.Errorf("no document")
	}
	return summary, nil
}

// documents splits a YAML stream at its `---` lines, leaving out documents of comments only.
func documents(text []byte) [][]byte {
	var docs [][]byte
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(text), -1) {
		for _, line := range strings.Split(doc, "\n") {
			trimmed := strings.TrimSpace(line)
			if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
				docs = append(docs, []byte(doc))
				break
			}
		}
	}
	return docs
}

func checkDocument(doc []byte) (string, error) {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return "", err
	}
	switch head.Kind {
	case "Job":
		var job batchv1.Job
		if err := yaml.UnmarshalStrict(doc, &job); err != nil {
			return "", fmt.Errorf("not a batch/v1 Job: %w", err)
		}
		return checkJob(&job)
	case "PersistentVolumeClaim":
		var claim corev1.PersistentVolumeClaim
		if err := yaml.UnmarshalStrict(doc, &claim); err != nil {
			return "", fmt.Errorf("not a v1 PersistentVolumeClaim: %w", err)
		}
		return "PersistentVolumeClaim " + claim.Name, nil
	default:
		return "", fmt.Errorf("kind %q: this check knows Job and PersistentVolumeClaim", head.Kind)
	}
}

var shardArg = regexp.MustCompile(`--shard \$\(\(JOB_COMPLETION_INDEX \+ 1\)\)/(\d+)`)

// checkJob holds a Job to what chaos needs: an indexed one plays shares, any other merges.
func checkJob(job *batchv1.Job) (string, error) {
	spec := job.Spec
	pod := spec.Template.Spec
	if len(pod.Containers) != 1 {
		return "", fmt.Errorf("job %s: one container (chaos), found %d", job.Name, len(pod.Containers))
	}
	command := strings.Join(append(pod.Containers[0].Command, pod.Containers[0].Args...), " ")
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		if !strings.Contains(command, "chaos compare --merge") {
			return "", fmt.Errorf("job %s: neither Indexed (the shares) nor a merge (chaos compare --merge)", job.Name)
		}
		return "Job " + job.Name + ": merges the shares", nil
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism {
		return "", fmt.Errorf("job %s: completions and parallelism must both be set, and equal (one pod per share, all at once)", job.Name)
	}
	shares := *spec.Completions
	found := shardArg.FindStringSubmatch(command)
	if found == nil {
		return "", fmt.Errorf("job %s: the chaos container must take its share from JOB_COMPLETION_INDEX: --shard $((JOB_COMPLETION_INDEX + 1))/N", job.Name)
	}
	if found[1] != fmt.Sprint(shares) {
		return "", fmt.Errorf("job %s: --shard .../%s, but %d completions", job.Name, found[1], shares)
	}
	if !strings.Contains(command, "chaos compare ") {
		return "", fmt.Errorf("job %s: the chaos container runs no chaos compare", job.Name)
	}
	engine := false
	for _, c := range pod.InitContainers {
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
		if sidecar && privileged && len(c.Command) > 0 && c.Command[0] == "dockerd" {
			engine = true
		}
	}
	if !engine {
		return "", fmt.Errorf("job %s: no Docker engine of the pod's own (a privileged dockerd sidecar: an init container with restartPolicy Always)", job.Name)
	}
	dockerHost := false
	for _, e := range pod.Containers[0].Env {
		dockerHost = dockerHost || (e.Name == "DOCKER_HOST" && e.Value != "")
	}
	if !dockerHost {
		return "", fmt.Errorf("job %s: the chaos container must reach the pod's engine (DOCKER_HOST)", job.Name)
	}
	return fmt.Sprintf("Job %s: Indexed, %d shares, each with its own Docker engine", job.Name, shares), nil
}

// trimmed keeps error messages to their first line.
func trimmed(b []byte) string {
	return string(bytes.SplitN(b, []byte("\n"), 2)[0])
}
