package main

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sort"

	openfga "github.com/openfga/go-sdk"
	"github.com/openfga/go-sdk/client"
	"gopkg.in/yaml.v3"
)

// storeFile is OpenFGA's store test file (`.fga.yaml`) without a model of its own: its tests run against
// the server's store and model, the file's tuples and each test's tuples sent as contextual tuples, as
// the `fga` CLI runs a store file that names no model against a remote server.
type storeFile struct {
	Name   string       `yaml:"name"`
	Model  string       `yaml:"model"`
	File   string       `yaml:"model_file"`
	Tuples []fileTuple  `yaml:"tuples"`
	Tests  []modelCheck `yaml:"tests"`
}

type fileTuple struct {
	User      string `yaml:"user"`
	Relation  string `yaml:"relation"`
	Object    string `yaml:"object"`
	Condition *struct {
		Name    string         `yaml:"name"`
		Context map[string]any `yaml:"context"`
	} `yaml:"condition"`
}

type modelCheck struct {
	Name   string      `yaml:"name"`
	Tuples []fileTuple `yaml:"tuples"`
	Check  []struct {
		User       string          `yaml:"user"`
		Object     string          `yaml:"object"`
		Context    map[string]any  `yaml:"context"`
		Assertions map[string]bool `yaml:"assertions"`
	} `yaml:"check"`
	ListObjects []struct {
		User       string              `yaml:"user"`
		Type       string              `yaml:"type"`
		Context    map[string]any      `yaml:"context"`
		Assertions map[string][]string `yaml:"assertions"`
	} `yaml:"list_objects"`
}

func (t fileTuple) key() client.ClientContextualTupleKey {
	k := client.ClientContextualTupleKey{User: t.User, Relation: t.Relation, Object: t.Object}
	if t.Condition != nil {
		c := t.Condition.Context
		k.Condition = &openfga.RelationshipCondition{Name: t.Condition.Name, Context: &c}
	}
	return k
}

// importTuples writes the tuples of a YAML or JSON file (a list of {user, relation, object, condition})
// as the CLI imports a file: the SDK's non-transactional Write, chunks of perWrite tuples sent parallel at
// a time, duplicates ignored unless onDuplicate is "error". It prints {"successful": [...], "failed":
// [{"tuple_key", "reason"}]} and returns an error when any tuple failed.
func importTuples(ctx context.Context, fga *client.OpenFgaClient, path, onDuplicate string, perWrite, parallel int32) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var list []fileTuple
	if err := yaml.Unmarshal(text, &list); err != nil {
		return fmt.Errorf("%s is not a list of tuples: %w", path, err)
	}
	keys := make([]client.ClientTupleKey, 0, len(list))
	for _, t := range list {
		keys = append(keys, t.key())
	}
	if onDuplicate == "" {
		onDuplicate = "ignore"
	}
	res, err := fga.Write(ctx).Body(client.ClientWriteRequest{Writes: keys}).Options(client.ClientWriteOptions{
		Transaction: &client.TransactionOptions{Disable: true, MaxPerChunk: perWrite, MaxParallelRequests: parallel},
		Conflict:    client.ClientWriteConflictOptions{OnDuplicateWrites: client.ClientWriteRequestOnDuplicateWrites(onDuplicate)},
	}).Execute()
	if err != nil {
		return fmt.Errorf("failed to write tuples due to %w", err)
	}
	type failure struct {
		TupleKey client.ClientTupleKey `json:"tuple_key"`
		Reason   string                `json:"reason"`
	}
	out := struct {
		Successful []client.ClientTupleKey `json:"successful"`
		Failed     []failure               `json:"failed"`
	}{Successful: []client.ClientTupleKey{}, Failed: []failure{}}
	for _, w := range res.Writes {
		if w.Status == client.SUCCESS {
			out.Successful = append(out.Successful, w.TupleKey)
		} else {
			out.Failed = append(out.Failed, failure{TupleKey: w.TupleKey, Reason: fmt.Sprint(w.Error)})
		}
	}
	if err := printJSON(out); err != nil {
		return err
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("%d of %d tuples were not written", len(out.Failed), len(keys))
	}
	return nil
}

func contextOf(m map[string]any) *map[string]any {
	if m == nil {
		return nil
	}
	return &m
}

// modelTest runs the store file's check and list_objects assertions against the server and prints a
// summary; any failed assertion (or a call that fails) makes it return an error (exit status 1).
func modelTest(ctx context.Context, fga *client.OpenFgaClient, path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var file storeFile
	if err := yaml.Unmarshal(text, &file); err != nil {
		return fmt.Errorf("%s is not a store file: %w", path, err)
	}
	if file.Model != "" || file.File != "" {
		return fmt.Errorf("%s names a model: this client runs store files against the server's model only", path)
	}
	checks, checksOK, lists, listsOK, testsOK := 0, 0, 0, 0, 0
	for _, test := range file.Tests {
		tuples := []client.ClientContextualTupleKey{}
		for _, t := range append(append([]fileTuple{}, file.Tuples...), test.Tuples...) {
			tuples = append(tuples, t.key())
		}
		failed := false
		for _, c := range test.Check {
			relations := sortedKeys(c.Assertions)
			for _, relation := range relations {
				want := c.Assertions[relation]
				checks++
				res, err := fga.Check(ctx).Body(client.ClientCheckRequest{User: c.User, Relation: relation, Object: c.Object, Context: contextOf(c.Context), ContextualTuples: tuples}).Execute()
				switch {
				case err != nil:
					failed = true
					fmt.Printf("(%s) FAILING CHECK: user=%s relation=%s object=%s: %v\n", test.Name, c.User, relation, c.Object, err)
				case res.GetAllowed() != want:
					failed = true
					fmt.Printf("(%s) FAILING CHECK: user=%s relation=%s object=%s: expected %v, got %v\n", test.Name, c.User, relation, c.Object, want, res.GetAllowed())
				default:
					checksOK++
				}
			}
		}
		for _, l := range test.ListObjects {
			for _, relation := range sortedKeys(l.Assertions) {
				want := append([]string{}, l.Assertions[relation]...)
				lists++
				res, err := fga.ListObjects(ctx).Body(client.ClientListObjectsRequest{User: l.User, Relation: relation, Type: l.Type, Context: contextOf(l.Context), ContextualTuples: tuples}).Execute()
				if err != nil {
					failed = true
					fmt.Printf("(%s) FAILING LIST OBJECTS: user=%s relation=%s type=%s: %v\n", test.Name, l.User, relation, l.Type, err)
					continue
				}
				got := append([]string{}, res.GetObjects()...)
				sort.Strings(got)
				sort.Strings(want)
				if len(got) == 0 && len(want) == 0 || reflect.DeepEqual(got, want) {
					listsOK++
				} else {
					failed = true
					fmt.Printf("(%s) FAILING LIST OBJECTS: user=%s relation=%s type=%s: expected %v, got %v\n", test.Name, l.User, relation, l.Type, want, got)
				}
			}
		}
		if !failed {
			testsOK++
		}
	}
	fmt.Printf("# Test Summary #\nTests %d/%d passing\nChecks %d/%d passing\nListObjects %d/%d passing\n", testsOK, len(file.Tests), checksOK, checks, listsOK, lists)
	if testsOK != len(file.Tests) {
		return fmt.Errorf("%d of %d tests failed", len(file.Tests)-testsOK, len(file.Tests))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
