package caddymodule

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"

	"slices"
	"strings"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/helptext"
	"github.com/helpdesk-gateway/gateway/openapi"
	"github.com/helpdesk-gateway/gateway/ticketfilter"
	"github.com/helpdesk-gateway/gateway/verify"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "helpdesk",
		Usage: "cursor|filters|openapi|verify ...",
		Short: "Tools for the help-desk gateway: cursors, filters, a rollout check",
		Long: `
Tools for operators of the helpdesk_gateway module:

  caddy helpdesk cursor encode <id>      print the _cursor for an id
  caddy helpdesk cursor decode <cursor>  print the id a _cursor carries
  caddy helpdesk filters check '<json>'  check a _filters value as the gateway does
  caddy helpdesk openapi --config Caddyfile
                                         print the OpenAPI document of the gateway's client contract
  caddy helpdesk verify --url <gateway> --endpoint /calls
                                         compare a cursor walk with a _page walk

Each exits non-zero when its input is wrong or a check fails.
`,
		CobraFunc: buildHelpdeskCommand,
	})
}

// buildHelpdeskCommand adds the subcommands to the helpdesk command.
func buildHelpdeskCommand(cmd *cobra.Command) {
	cmd.Args = cobra.NoArgs
	cmd.RunE = showHelp

	cursorCmd := &cobra.Command{Use: "cursor", Short: "Encode or decode a _cursor value", Args: cobra.NoArgs, RunE: showHelp}
	cursorCmd.AddCommand(&cobra.Command{
		Use:   "encode <id>",
		Short: "Print the _cursor for id: base64 of {\"id\":\"<id>\"}, as next_page_cursor carries it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "" {
				return errors.New("the id is empty; a cursor carries the last id a client has")
			}
			fmt.Fprintln(cmd.OutOrStdout(), cursor.Encode(args[0]))
			return nil
		},
	}, &cobra.Command{
		Use:   "decode <cursor>",
		Short: "Print the id a _cursor carries, accepting what the gateway accepts",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := cursor.Decode(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), id)
			return nil
		},
	})

	filters := &cobra.Command{Use: "filters", Short: "Check a _filters value", Args: cobra.NoArgs, RunE: showHelp}
	filters.AddCommand(filtersCheckCommand())

	cmd.AddCommand(cursorCmd, filters, openAPICommand(), verifyCommand())
}

// showHelp is the action of a command that only groups others.
func showHelp(cmd *cobra.Command, _ []string) error { return cmd.Help() }

func filtersCheckCommand() *cobra.Command {
	var cfg ticketfilter.FilterConfig
	cmd := &cobra.Command{
		Use:   "check '<json>'",
		Short: "Check a _filters value (the decoded query value) as the gateway would",
		Long: `Checks a _filters value against the spec's parameters and operators, with
the gateway's default limits (50 filters, 8 KiB). Without the code flags any
status, channel_type and DP code is accepted, as in the gateway's default.
Prints OK and the filters when valid; otherwise what is wrong, and exits 1.

` + helptext.Words("The codes LiveAgent uses, as "+ticketfilter.CodesSource+" show them:", "") + `` + helptext.Codes("status", ticketfilter.StatusCodes()) + helptext.Codes("channel_type", ticketfilter.ChannelTypes()) +
			helptext.Codes("DP", ticketfilter.PeriodCodes()) + `
Example: caddy helpdesk filters check '[["status","IN","C,L"],["date_created","DP","L7D"]]'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := ticketfilter.NewFilterValidator(cfg).Parse(args[0])
			if err != nil {
				return fmt.Errorf("invalid _filters: %w", err)
			}
			out := cmd.OutOrStdout()
			switch len(list) {
			case 0:
				fmt.Fprintln(out, "OK: no filters")
			case 1:
				fmt.Fprintln(out, "OK: 1 filter")
			default:
				fmt.Fprintf(out, "OK: %d filters\n", len(list))
			}
			for i, f := range list {
				fmt.Fprintf(out, "  %d. %s %s %q\n", i+1, f.Param, f.Op, f.Value)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&cfg.StatusCodes, "status-codes", nil, "allowed status codes, comma-separated (as status_codes), e.g. "+strings.Join(ticketfilter.CodeValues(ticketfilter.StatusCodes()), ","))
	fl.StringSliceVar(&cfg.ChannelTypes, "channel-types", nil, "allowed channel_type codes, comma-separated (as channel_types), e.g. "+strings.Join(ticketfilter.CodeValues(ticketfilter.ChannelTypes()), ","))
	fl.StringSliceVar(&cfg.PeriodCodes, "period-codes", nil, "allowed DP period codes, comma-separated (as period_codes), e.g. "+strings.Join(ticketfilter.CodeValues(ticketfilter.PeriodCodes()), ","))
	return cmd
}

// flagNames spells the gateway's paging options as verify's flags, for
// the messages of checkDialect.
var flagNames = strings.NewReplacer(
	"backend_page_param", "--backend-page-param",
	"backend_per_page_param", "--backend-per-page-param",
	"backend_first_page", "--backend-first-page",
	"backend_offset_param", "--backend-offset-param",
	"backend_keyset", "--backend-keyset",
	"backend_sort", "--backend-sort",
	"id_order", "--id-order",
)

func openAPICommand() *cobra.Command {
	var configFile, adapter, server string
	cmd := &cobra.Command{
		Use:   "openapi [--config Caddyfile] [--adapter name] [--server name]",
		Short: "Print the OpenAPI 3.1 document of the gateway's client contract for a config",
		Long: `Adapts the config as Caddy would (a Caddyfile, or JSON), finds every
helpdesk_gateway handler in it, and prints the OpenAPI 3.1 document of their
client contract: the endpoints under base_path, _perPage, _cursor and
next_page_cursor, the error answers and the _filters grammar, as the
handlers are configured (defaults applied).

Several handlers (several sites or routes) make one document when their
endpoints differ or are configured alike; when two configure one path
differently, pick a server with --server (srv0, srv1, ... as
'caddy adapt' names them). The gateway serves the same document itself
with the openapi_path option.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if adapter == "" && configFile != "" && !strings.HasSuffix(configFile, ".json") {
				adapter = "caddyfile" // as caddy adapt assumes
			}
			cfgJSON, _, _, err := caddycmd.LoadConfig(configFile, adapter)
			if err != nil {
				return err
			}
			if cfgJSON == nil {
				return errors.New("no config: give one with --config")
			}
			doc, err := openAPIDocument(cfgJSON, server)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(doc)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configFile, "config", "", "the config file; default: ./Caddyfile")
	fl.StringVar(&adapter, "adapter", "", "the config adapter; default: caddyfile, or none for a .json file")
	fl.StringVar(&server, "server", "", "describe only the handlers of this server (srv0, ...)")
	return cmd
}

// openAPIDocument is the document of the helpdesk_gateway handlers of a
// Caddy JSON config, or of one of its servers.
func openAPIDocument(cfgJSON []byte, server string) ([]byte, error) {
	byServer, err := OpenAPIConfigs(cfgJSON)
	if err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(byServer))
	var gateways []openapi.Config
	for _, name := range names {
		if server == "" || name == server {
			gateways = append(gateways, byServer[name]...)
		}
	}
	switch {
	case len(gateways) == 0 && server != "":
		return nil, fmt.Errorf("server %q has no helpdesk_gateway handler; servers with one: %s", server, strings.Join(names, ", "))
	case len(gateways) == 0:
		return nil, errors.New("the config has no helpdesk_gateway handler")
	}
	doc, err := openapi.Generate(gateways...)
	if err != nil && server == "" && len(names) > 1 {
		return nil, fmt.Errorf("%v; pick one server with --server (%s)", err, strings.Join(names, ", "))
	}
	return doc, err
}

func verifyCommand() *cobra.Command {
	var (
		cfg     verify.Config
		headers []string
		order   string
		timeout time.Duration
		dialect Gateway // the backend_* paging options, as the gateway takes them
		first   string  // --backend-first-page; "" when not given
	)
	cmd := &cobra.Command{
		Use:   "verify --url <gateway base URL> --endpoint /calls [--backend <backend base URL>] [--per-page N] [--header 'K: V']...",
		Short: "Walk an endpoint by cursor and by _page through the gateway, and on the backend, and compare",
		Long: `Walks a cursor endpoint through the gateway by _page, then by cursor
(following next_page_cursor), and compares the two. With --backend it first
walks the same list on the backend itself, in its paging dialect (the
--backend-*-param and --backend-first-page flags, named as the gateway's
options; default _page/_perPage) with --backend-sort until an empty page,
and compares that with the cursor walk too.

Without --backend both walks go through the gateway, so a gateway that ends
a walk early or reads the wrong offsets (as when the backend pages in a way
the gateway was not told of) passes unseen: a rollout check without
--backend cannot see truncation.

It reports:

  duplicate   an id the cursor walk served twice
  order       ids of the cursor walk not strictly increasing, or a _page page
              out of id order
  cursor      a next_page_cursor that does not carry its page's last id, comes
              with a short page, or does not move forward
  gap         an id of the _page walk that the cursor walk lacks, and that a
              second _page walk after the cursor walk still has; ids the
              second walk no longer has were deleted meanwhile and are noted,
              not counted (this assumes the backend never reuses an id)
  lost        (--backend) an id in the backend's list before and after the
              cursor walk that the cursor walk never served
  paging      (--backend) the backend answered the second window as the first:
              it does not page by the page or offset parameter it was given
  keyset      (--backend with --backend-keyset) asked for the records above an
              id of its own walk, the backend answered from the list's start,
              or records at or below the id: it ignores or misreads the
              condition (the gateway then reads that list by offset)
  request     a request that failed or an answer without a records array
  incomplete  a walk that did not end within --max-pages

Records that change during the walks make the _page walk repeat or skip
records; that is noted, not counted. With --backend it also reports what
it saw of the backend (its page-size limit, whether its pages start at 0
or 1, whether it reads the page or offset parameter, its id order) and
prints the Caddyfile lines that match. Progress goes to
stderr every few seconds; the report to stdout. Exits 1 when any problem
was found.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Order, err = cursor.ParseOrder(order); err != nil {
				return fmt.Errorf("--id-order: %w", err)
			}
			cfg.Header = http.Header{}
			for _, h := range headers {
				k, val, ok := strings.Cut(h, ":")
				if k = strings.TrimSpace(k); !ok || k == "" || strings.ContainsAny(k, " \t") {
					return fmt.Errorf("--header %q: want \"Name: value\"", h)
				}
				cfg.Header.Add(k, strings.TrimSpace(val))
			}
			if timeout <= 0 {
				return fmt.Errorf("--timeout %v: want a positive duration", timeout)
			}
			if first != "" {
				n, err := strconv.Atoi(first)
				if err != nil {
					return fmt.Errorf("--backend-first-page %q: want 0 or 1", first)
				}
				dialect.BackendFirstPage = &n
			}
			dialect.BackendSort, dialect.IDOrder = cfg.BackendSort, cfg.Order.String()
			if err := dialect.checkDialect(); err != nil {
				return errors.New(flagNames.Replace(err.Error()))
			}
			cfg.BackendPaging = dialect.backendDialect()
			transport := http.DefaultTransport.(*http.Transport).Clone()
			cfg.Client = &http.Client{Timeout: timeout, Transport: transport}
			defer transport.CloseIdleConnections()
			cfg.Progress = cmd.ErrOrStderr()
			cfg.Every = 2 * time.Second
			problems, err := verify.Run(cmd.Context(), cfg, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			if problems > 0 {
				if problems == 1 {
					return errors.New("verify found 1 problem")
				}
				return fmt.Errorf("verify found %d problems", problems)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.BaseURL, "url", "", "base URL of the gateway, e.g. http://127.0.0.1:8080 (required)")
	fl.StringVar(&cfg.Endpoint, "endpoint", "", "cursor endpoint to walk, with base_path and any query, e.g. /calls (required)")
	fl.IntVar(&cfg.PerPage, "per-page", 100, "_perPage of every request")
	fl.StringArrayVar(&headers, "header", nil, "request header \"Name: value\", e.g. an API key; repeatable")
	fl.StringVar(&cfg.IDField, "id-field", "id", "gjson path of a record's id (as id_field)")
	fl.StringVar(&cfg.RecordsPath, "records-path", "", "gjson path of the records array; default: the body is the array (as records_path)")
	fl.StringVar(&order, "id-order", "numeric", "numeric or lexical (as id_order)")
	fl.IntVar(&cfg.MaxPages, "max-pages", 10000, "stop each walk after this many pages")
	fl.DurationVar(&timeout, "timeout", 30*time.Second, "timeout of each request")
	fl.StringVar(&cfg.BackendURL, "backend", "", "base URL of the backend itself, e.g. http://127.0.0.1:9080: also walk it directly and report records the gateway lost")
	fl.StringVar(&cfg.BackendSort, "backend-sort", "_sortField=id&_sortDir=ASC", "the gateway's backend_sort, for the backend walk")
	fl.IntVar(&cfg.BackendPerPage, "backend-per-page", 1000, "page size of the backend walk (the gateway's backend_max_per_page)")
	fl.StringVar(&dialect.BackendPageParam, "backend-page-param", "", "the backend's page number parameter (as backend_page_param); default _page")
	fl.StringVar(&dialect.BackendPerPageParam, "backend-per-page-param", "", "the backend's page size or limit parameter (as backend_per_page_param); default _perPage")
	fl.StringVar(&first, "backend-first-page", "", "the number of the backend's first page, 0 or 1 (as backend_first_page); default 1")
	fl.StringVar(&dialect.BackendOffsetParam, "backend-offset-param", "", "the backend's offset parameter, for a backend paged by offset and limit (as backend_offset_param)")
	fl.StringVar(&dialect.BackendKeyset, "backend-keyset", "", "the backend's query for the records above an id, {id} for the id (as backend_keyset): probed after a few ids of the backend walk")
	_ = cmd.MarkFlagRequired("url")
	_ = cmd.MarkFlagRequired("endpoint")
	return cmd
}
