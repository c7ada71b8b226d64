// Command openfga-go-client drives an OpenFGA HTTP API with OpenFGA's Go SDK (github.com/openfga/go-sdk,
// its `client` package: the HTTP layer the `fga` CLI is built on), one command line per call, the
// commands and flags named as the `fga` CLI names them. It prints each answer as JSON on stdout and
// failures as `Error: …` on stderr with exit status 1, so tests drive it as a user drives the CLI.
//
// Usage:
//
//	openfga-go-client [--api-url URL] [--api-token KEY] COMMAND [flags] [args]
//
//	store list | store get --store-id ID | store create --name NAME
//	model write --store-id ID --file model.fga          (OpenFGA DSL, turned into JSON as the CLI does)
//	model get --store-id ID [--model-id ID]
//	tuple write --store-id ID [--condition-name N --condition-context JSON] [--on-duplicate error|ignore] USER RELATION OBJECT
//	tuple delete --store-id ID [--on-missing error|ignore] USER RELATION OBJECT
//	tuple write --store-id ID --file TUPLES.yaml|json [--max-tuples-per-write N] [--max-parallel-requests N]
//	                          (non-transactional, as the CLI imports a file: chunks of N sent in parallel,
//	                          existing tuples ignored unless --on-duplicate error)
//	tuple changes --store-id ID [--type T] [--start-time RFC3339] [--page-size N] [--continuation-token TOKEN]
//	tuple read --store-id ID [--user U --relation R --object O] [--page-size N] [--max-pages N (0 = all)]
//	query check --store-id ID [--contextual-tuple "USER RELATION OBJECT"]... [--context JSON] USER RELATION OBJECT
//	query list-objects --store-id ID [--contextual-tuple …]... [--context JSON] USER RELATION TYPE
//	query list-users --store-id ID --object TYPE:ID --relation R --user-filter TYPE[#RELATION] [--context JSON]
//	query expand --store-id ID RELATION OBJECT
//	query batch-check --store-id ID "USER RELATION OBJECT"...   (server-side BatchCheck, correlation ids 1, 2, …)
//	model test --store-id ID --tests FILE.fga.yaml      (the store file's tests against the server)
//
// --api-url and --api-token default to FGA_API_URL and FGA_API_TOKEN, as in the CLI. Instead of
// --api-token, OAuth 2.0 client credentials (RFC 6749 §4.4) as the CLI takes them: --api-token-issuer
// (the token endpoint is its /oauth/token unless it has a path), --client-id, --client-secret and
// optionally --api-audience and --api-scopes (space-separated).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	openfga "github.com/openfga/go-sdk"
	"github.com/openfga/go-sdk/client"
	"github.com/openfga/go-sdk/credentials"
	"github.com/openfga/language/pkg/go/transformer"
)

// tupleList collects repeated `--contextual-tuple "user relation object"` flags.
type tupleList []client.ClientContextualTupleKey

func (l *tupleList) String() string { return fmt.Sprint(len(*l)) }

func (l *tupleList) Set(v string) error {
	parts := strings.Fields(v)
	if len(parts) != 3 {
		return fmt.Errorf("a contextual tuple is \"user relation object\", got %q", v)
	}
	*l = append(*l, client.ClientContextualTupleKey{User: parts[0], Relation: parts[1], Object: parts[2]})
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		os.Exit(1)
	}
}

// auth is how the client authenticates: a preshared key (token), or client credentials (issuer set).
type auth struct {
	token, issuer, clientID, clientSecret, audience, scopes string
}

// newClient builds the SDK client for apiURL with a's credentials (none when a is empty).
func newClient(apiURL string, a auth, storeID, modelID string) (*client.OpenFgaClient, error) {
	cfg := &client.ClientConfiguration{ApiUrl: apiURL, StoreId: storeID, AuthorizationModelId: modelID}
	switch {
	case a.issuer != "":
		cfg.Credentials = &credentials.Credentials{Method: credentials.CredentialsMethodClientCredentials, Config: &credentials.Config{
			ClientCredentialsApiTokenIssuer: a.issuer, ClientCredentialsClientId: a.clientID, ClientCredentialsClientSecret: a.clientSecret,
			ClientCredentialsApiAudience: a.audience, ClientCredentialsScopes: a.scopes,
		}}
	case a.token != "":
		cfg.Credentials = &credentials.Credentials{Method: credentials.CredentialsMethodApiToken, Config: &credentials.Config{ApiToken: a.token}}
	}
	return client.NewSdkClient(cfg)
}

func printJSON(v any) error {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}

// parseContext reads a `--context` / `--condition-context` JSON object (empty → nil).
func parseContext(text string) (*map[string]any, error) {
	if text == "" {
		return nil, nil
	}
	m := map[string]any{}
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, fmt.Errorf("context is not a JSON object: %w", err)
	}
	return &m, nil
}

func run(args []string) error {
	global := flag.NewFlagSet("openfga-go-client", flag.ContinueOnError)
	apiURL := global.String("api-url", os.Getenv("FGA_API_URL"), "the OpenFGA API's URL")
	apiToken := global.String("api-token", os.Getenv("FGA_API_TOKEN"), "a preshared key (bearer token)")
	var a auth
	global.StringVar(&a.issuer, "api-token-issuer", os.Getenv("FGA_API_TOKEN_ISSUER"), "client credentials: the token issuer")
	global.StringVar(&a.clientID, "client-id", os.Getenv("FGA_CLIENT_ID"), "client credentials: the client id")
	global.StringVar(&a.clientSecret, "client-secret", os.Getenv("FGA_CLIENT_SECRET"), "client credentials: the client secret")
	global.StringVar(&a.audience, "api-audience", os.Getenv("FGA_API_AUDIENCE"), "client credentials: the audience")
	global.StringVar(&a.scopes, "api-scopes", os.Getenv("FGA_API_SCOPES"), "client credentials: the scopes, space-separated")
	if err := global.Parse(args); err != nil {
		return err
	}
	rest := global.Args()
	if len(rest) < 2 {
		return errors.New("usage: openfga-go-client [--api-url URL] [--api-token KEY] (store|model|tuple|query) COMMAND [flags] [args]")
	}
	name := rest[0] + " " + rest[1]
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	storeID := fs.String("store-id", os.Getenv("FGA_STORE_ID"), "the store")
	modelID := fs.String("model-id", os.Getenv("FGA_MODEL_ID"), "the authorization model (default: the latest)")
	storeName := fs.String("name", "", "store create: the store's name")
	file := fs.String("file", "", "model write: the model, in OpenFGA's DSL")
	tests := fs.String("tests", "", "model test: the store test file (.fga.yaml)")
	user := fs.String("user", "", "tuple read: filter")
	relation := fs.String("relation", "", "tuple read: filter")
	object := fs.String("object", "", "tuple read: filter")
	pageSize := fs.Int("page-size", 50, "tuple read: tuples per page")
	maxPages := fs.Int("max-pages", 20, "tuple read: pages to read (0 = all)")
	conditionName := fs.String("condition-name", "", "tuple write: the tuple's condition")
	conditionContext := fs.String("condition-context", "", "tuple write: the condition's stored context (JSON)")
	queryContext := fs.String("context", "", "query: the request context (JSON)")
	onDuplicate := fs.String("on-duplicate", "", "tuple write: error or ignore")
	onMissing := fs.String("on-missing", "", "tuple delete: error or ignore")
	changeType := fs.String("type", "", "tuple changes: the object type")
	token := fs.String("continuation-token", "", "tuple changes: where to go on from")
	startTime := fs.String("start-time", "", "tuple changes: changes from this time on (RFC 3339)")
	userFilter := fs.String("user-filter", "", "query list-users: TYPE or TYPE#RELATION")
	perWrite := fs.Int("max-tuples-per-write", 1, "tuple write --file: tuples per Write call")
	parallel := fs.Int("max-parallel-requests", 4, "tuple write --file: Write calls at once")
	var contextual tupleList
	fs.Var(&contextual, "contextual-tuple", "query: a contextual tuple \"user relation object\" (repeatable)")
	if err := fs.Parse(rest[2:]); err != nil {
		return err
	}
	pos := fs.Args()
	a.token = *apiToken
	fga, err := newClient(*apiURL, a, *storeID, *modelID)
	if err != nil {
		return err
	}
	ctx := context.Background()
	need := func(n int, what string) error {
		if len(pos) != n {
			return fmt.Errorf("%s takes %s", name, what)
		}
		return nil
	}

	switch name {
	case "store list":
		res, err := fga.ListStores(ctx).Execute()
		if err != nil {
			return fmt.Errorf("failed to list stores due to %w", err)
		}
		return printJSON(res)
	case "store get":
		res, err := fga.GetStore(ctx).Execute()
		if err != nil {
			return fmt.Errorf("failed to get store due to %w", err)
		}
		return printJSON(res)
	case "store create":
		res, err := fga.CreateStore(ctx).Body(client.ClientCreateStoreRequest{Name: *storeName}).Execute()
		if err != nil {
			return fmt.Errorf("failed to create store due to %w", err)
		}
		return printJSON(res)
	case "model write":
		dsl, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		text, err := transformer.TransformDSLToJSON(string(dsl))
		if err != nil {
			return fmt.Errorf("failed to transform the model due to %w", err)
		}
		var body client.ClientWriteAuthorizationModelRequest
		if err := json.Unmarshal([]byte(text), &body); err != nil {
			return err
		}
		res, err := fga.WriteAuthorizationModel(ctx).Body(body).Execute()
		if err != nil {
			return fmt.Errorf("failed to write model due to %w", err)
		}
		return printJSON(res)
	case "model get":
		if *modelID != "" {
			res, err := fga.ReadAuthorizationModel(ctx).Execute()
			if err != nil {
				return fmt.Errorf("failed to get model due to %w", err)
			}
			return printJSON(res)
		}
		res, err := fga.ReadLatestAuthorizationModel(ctx).Execute()
		if err != nil {
			return fmt.Errorf("failed to get model due to %w", err)
		}
		return printJSON(res)
	case "tuple write", "tuple delete":
		if name == "tuple write" && *file != "" {
			return importTuples(ctx, fga, *file, *onDuplicate, int32(*perWrite), int32(*parallel))
		}
		if err := need(3, "USER RELATION OBJECT"); err != nil {
			return err
		}
		body := client.ClientWriteRequest{}
		if name == "tuple write" {
			key := client.ClientTupleKey{User: pos[0], Relation: pos[1], Object: pos[2]}
			if *conditionName != "" {
				c, err := parseContext(*conditionContext)
				if err != nil {
					return err
				}
				key.Condition = &openfga.RelationshipCondition{Name: *conditionName, Context: c}
			}
			body.Writes = []client.ClientTupleKey{key}
		} else {
			body.Deletes = []client.ClientTupleKeyWithoutCondition{{User: pos[0], Relation: pos[1], Object: pos[2]}}
		}
		opts := client.ClientWriteOptions{Conflict: client.ClientWriteConflictOptions{
			OnDuplicateWrites: client.ClientWriteRequestOnDuplicateWrites(*onDuplicate),
			OnMissingDeletes:  client.ClientWriteRequestOnMissingDeletes(*onMissing),
		}}
		if _, err := fga.Write(ctx).Body(body).Options(opts).Execute(); err != nil {
			return fmt.Errorf("failed to %s tuple due to %w", strings.TrimPrefix(name, "tuple "), err)
		}
		return printJSON(map[string]any{"successful": 1})
	case "tuple read":
		filter := client.ClientReadRequest{}
		if *user != "" {
			filter.User = user
		}
		if *relation != "" {
			filter.Relation = relation
		}
		if *object != "" {
			filter.Object = object
		}
		tuples := []openfga.Tuple{}
		next := ""
		size := int32(*pageSize)
		for page := 0; *maxPages == 0 || page < *maxPages; page++ {
			opts := client.ClientReadOptions{PageSize: &size}
			if next != "" {
				opts.ContinuationToken = &next
			}
			res, err := fga.Read(ctx).Body(filter).Options(opts).Execute()
			if err != nil {
				return fmt.Errorf("failed to read tuples due to %w", err)
			}
			tuples = append(tuples, res.Tuples...)
			next = res.ContinuationToken
			if next == "" {
				break
			}
		}
		return printJSON(map[string]any{"tuples": tuples, "continuation_token": next})
	case "tuple changes":
		size := int32(*pageSize)
		opts := client.ClientReadChangesOptions{PageSize: &size}
		if *token != "" {
			opts.ContinuationToken = token
		}
		body := client.ClientReadChangesRequest{Type: *changeType}
		if *startTime != "" {
			at, err := time.Parse(time.RFC3339, *startTime)
			if err != nil {
				return fmt.Errorf("--start-time is not RFC 3339: %w", err)
			}
			body.StartTime = at
		}
		res, err := fga.ReadChanges(ctx).Body(body).Options(opts).Execute()
		if err != nil {
			return fmt.Errorf("failed to read changes due to %w", err)
		}
		return printJSON(res)
	case "query check":
		if err := need(3, "USER RELATION OBJECT"); err != nil {
			return err
		}
		c, err := parseContext(*queryContext)
		if err != nil {
			return err
		}
		res, err := fga.Check(ctx).Body(client.ClientCheckRequest{User: pos[0], Relation: pos[1], Object: pos[2], Context: c, ContextualTuples: contextual}).Execute()
		if err != nil {
			return fmt.Errorf("failed to check due to %w", err)
		}
		return printJSON(res.CheckResponse)
	case "query list-objects":
		if err := need(3, "USER RELATION TYPE"); err != nil {
			return err
		}
		c, err := parseContext(*queryContext)
		if err != nil {
			return err
		}
		res, err := fga.ListObjects(ctx).Body(client.ClientListObjectsRequest{User: pos[0], Relation: pos[1], Type: pos[2], Context: c, ContextualTuples: contextual}).Execute()
		if err != nil {
			return fmt.Errorf("failed to list objects due to %w", err)
		}
		return printJSON(res)
	case "query list-users":
		typ, id, ok := strings.Cut(*object, ":")
		if !ok {
			return errors.New("--object is TYPE:ID")
		}
		filter := openfga.UserTypeFilter{Type: *userFilter}
		if t, r, ok := strings.Cut(*userFilter, "#"); ok {
			filter = openfga.UserTypeFilter{Type: t, Relation: &r}
		}
		c, err := parseContext(*queryContext)
		if err != nil {
			return err
		}
		res, err := fga.ListUsers(ctx).Body(client.ClientListUsersRequest{
			Object: openfga.FgaObject{Type: typ, Id: id}, Relation: *relation, UserFilters: []openfga.UserTypeFilter{filter}, Context: c, ContextualTuples: contextual,
		}).Execute()
		if err != nil {
			return fmt.Errorf("failed to list users due to %w", err)
		}
		return printJSON(res)
	case "query expand":
		if err := need(2, "RELATION OBJECT"); err != nil {
			return err
		}
		res, err := fga.Expand(ctx).Body(client.ClientExpandRequest{Relation: pos[0], Object: pos[1]}).Execute()
		if err != nil {
			return fmt.Errorf("failed to expand due to %w", err)
		}
		return printJSON(res)
	case "query batch-check":
		checks := []client.ClientBatchCheckItem{}
		for i, text := range pos {
			parts := strings.Fields(text)
			if len(parts) != 3 {
				return fmt.Errorf("a check is \"user relation object\", got %q", text)
			}
			checks = append(checks, client.ClientBatchCheckItem{User: parts[0], Relation: parts[1], Object: parts[2], CorrelationId: fmt.Sprint(i + 1)})
		}
		res, err := fga.BatchCheck(ctx).Body(client.ClientBatchCheckRequest{Checks: checks}).Execute()
		if err != nil {
			return fmt.Errorf("failed to batch check due to %w", err)
		}
		return printJSON(res)
	case "model test":
		return modelTest(ctx, fga, *tests)
	}
	return fmt.Errorf("unknown command %q", name)
}
