package cli

// samsa tokens: delegation tokens (KIP-48) with the options of Kafka's
// kafka-delegation-tokens. The HMAC, the token's password, is printed and
// read as standard base64, as Kafka's tool prints it.

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func newTokensCommand(opts *globalOptions) *cobra.Command {
	cmd := newParentCommand("tokens", "Create, renew, expire and describe delegation tokens",
		`  samsa tokens create --renewer-principal User:bob --max-life-time-period 86400000
  samsa tokens create --owner-principal User:alice
  samsa tokens describe --owner-principal User:alice
  samsa tokens renew --hmac <base64 HMAC> --renew-time-period 3600000
  samsa tokens expire --hmac <base64 HMAC> --expiry-time-period -1

A client authenticates with a token over SCRAM, the token id as the user
name, the HMAC as the password, and tokenauth="true" in its JAAS config:
  sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="<token id>" password="<HMAC>" tokenauth="true";`)
	cmd.AddCommand(newTokensCreateCommand(opts), newTokensRenewCommand(opts), newTokensExpireCommand(opts), newTokensDescribeCommand(opts))
	return cmd
}

// listedToken is one token as the tokens commands print it.
type listedToken struct {
	TokenID   string   `json:"tokenId"`
	HMAC      string   `json:"hmac"`
	Owner     string   `json:"owner"`
	Requester string   `json:"requester"`
	Renewers  []string `json:"renewers"`
	IssueDate string   `json:"issueDate"`
	Expiry    string   `json:"expiryDate"`
	MaxDate   string   `json:"maxDate"`
}

func principalString(p kadm.Principal) string { return p.Type + ":" + p.Name }

func listToken(t kadm.DelegationToken) listedToken {
	renewers := make([]string, 0, len(t.Renewers))
	for _, r := range t.Renewers {
		renewers = append(renewers, principalString(r))
	}
	stamp := func(ts time.Time) string { return ts.UTC().Format(time.RFC3339) }
	return listedToken{TokenID: t.TokenID, HMAC: base64.StdEncoding.EncodeToString(t.HMAC), Owner: principalString(t.Owner),
		Requester: principalString(t.TokenRequesterPrincipal), Renewers: renewers,
		IssueDate: stamp(t.IssueTimestamp), Expiry: stamp(t.ExpiryTimestamp), MaxDate: stamp(t.MaxTimestamp)}
}

func (opts *globalOptions) writeTokens(cmd *cobra.Command, tokens []listedToken) error {
	out := cmd.OutOrStdout()
	if opts.jsonOutput() {
		if tokens == nil {
			tokens = []listedToken{}
		}
		return writeJSON(out, tokens)
	}
	t := newTable(out, "TOKENID", "HMAC", "OWNER", "REQUESTER", "RENEWERS", "ISSUEDATE", "EXPIRYDATE", "MAXDATE")
	for _, token := range tokens {
		t.row(token.TokenID, token.HMAC, token.Owner, token.Requester, strings.Join(token.Renewers, ","), token.IssueDate, token.Expiry, token.MaxDate)
	}
	return t.flush()
}

// parsePrincipals reads "Type:Name" principals.
func parsePrincipals(cmd *cobra.Command, flag string, values []string) ([]kadm.Principal, error) {
	out := make([]kadm.Principal, 0, len(values))
	for _, v := range values {
		principalType, name, ok := strings.Cut(v, ":")
		if !ok || principalType == "" || name == "" {
			return nil, newUsageError(cmd.CommandPath(), "--%s must be Type:Name (User:alice), got %q", flag, v)
		}
		out = append(out, kadm.Principal{Type: principalType, Name: name})
	}
	return out, nil
}

func newTokensCreateCommand(opts *globalOptions) *cobra.Command {
	var owner string
	var renewers []string
	var maxLifetimeMs int64
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a delegation token (CreateDelegationToken)",
		Long: `Create a delegation token for the authenticated user, or with
--owner-principal for another user (which needs CREATE_TOKENS on that user).
Token requests are refused on PLAINTEXT connections and on connections a
token authenticated.`,
		Example: "  samsa --command-config admin.properties tokens create --renewer-principal User:bob",
		Args:    argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			renewing, err := parsePrincipals(cmd, "renewer-principal", renewers)
			if err != nil {
				return err
			}
			request := kadm.CreateDelegationToken{Renewers: renewing, MaxLifetime: time.Duration(maxLifetimeMs) * time.Millisecond}
			if owner != "" {
				owners, err := parsePrincipals(cmd, "owner-principal", []string{owner})
				if err != nil {
					return err
				}
				request.Owner = &owners[0]
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			token, err := admin.CreateDelegationToken(ctx, request)
			if err != nil {
				return fmt.Errorf("create token: %w", err)
			}
			return opts.writeTokens(cmd, []listedToken{listToken(token)})
		},
	}
	cmd.Flags().StringVar(&owner, "owner-principal", "", "the token's owner as Type:Name (default: the authenticated user)")
	cmd.Flags().StringArrayVar(&renewers, "renewer-principal", nil, "a principal that may renew the token, as User:name (repeatable)")
	cmd.Flags().Int64Var(&maxLifetimeMs, "max-life-time-period", -1, "the token's maximum lifetime in ms; -1 for delegation.token.max.lifetime.ms")
	return cmd
}

// parseHMAC reads --hmac.
func parseHMAC(cmd *cobra.Command, value string) ([]byte, error) {
	if value == "" {
		return nil, newUsageError(cmd.CommandPath(), "--hmac is required")
	}
	hmac, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return nil, newUsageError(cmd.CommandPath(), "--hmac must be base64, as tokens create prints it: %v", err)
	}
	return hmac, nil
}

func newTokensRenewCommand(opts *globalOptions) *cobra.Command {
	var hmacText string
	var periodMs int64
	cmd := &cobra.Command{
		Use:     "renew",
		Short:   "Renew a delegation token (owner, requester or renewer)",
		Example: "  samsa tokens renew --hmac <HMAC> --renew-time-period 3600000",
		Args:    argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			hmac, err := parseHMAC(cmd, hmacText)
			if err != nil {
				return err
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			expiry, err := admin.RenewDelegationToken(ctx, hmac, time.Duration(periodMs)*time.Millisecond)
			if err != nil {
				return fmt.Errorf("renew token: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Renewed the token; it now expires at %s.\n", expiry.UTC().Format(time.RFC3339))
			return nil
		},
	}
	cmd.Flags().StringVar(&hmacText, "hmac", "", "the token's HMAC (base64)")
	cmd.Flags().Int64Var(&periodMs, "renew-time-period", -1, "ms from now until the new expiry; -1 for delegation.token.expiry.time.ms")
	return cmd
}

func newTokensExpireCommand(opts *globalOptions) *cobra.Command {
	var hmacText string
	var periodMs int64
	cmd := &cobra.Command{
		Use:     "expire",
		Short:   "Expire a delegation token now or later (owner, requester or renewer)",
		Example: "  samsa tokens expire --hmac <HMAC>\n  samsa tokens expire --hmac <HMAC> --expiry-time-period 60000",
		Args:    argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			hmac, err := parseHMAC(cmd, hmacText)
			if err != nil {
				return err
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			expiry, err := admin.ExpireDelegationToken(ctx, hmac, time.Duration(periodMs)*time.Millisecond)
			if err != nil {
				return fmt.Errorf("expire token: %w", err)
			}
			if periodMs < 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "Expired the token.")
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "The token now expires at %s.\n", expiry.UTC().Format(time.RFC3339))
			return nil
		},
	}
	cmd.Flags().StringVar(&hmacText, "hmac", "", "the token's HMAC (base64)")
	cmd.Flags().Int64Var(&periodMs, "expiry-time-period", -1, "ms from now until the token expires; -1 expires it now")
	return cmd
}

func newTokensDescribeCommand(opts *globalOptions) *cobra.Command {
	var owners []string
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Describe the delegation tokens the authenticated user may see",
		Long: `Describe delegation tokens: without --owner-principal every token the
authenticated user owns, requested or may renew, may DESCRIBE, or whose
owner's tokens it may DESCRIBE_TOKENS; with it, only those of the owners.`,
		Example: "  samsa tokens describe\n  samsa tokens describe --owner-principal User:alice -o json",
		Args:    argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			principals, err := parsePrincipals(cmd, "owner-principal", owners)
			if err != nil {
				return err
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			tokens, err := admin.DescribeDelegationTokens(ctx, principals...)
			if err != nil {
				return fmt.Errorf("describe tokens: %w", err)
			}
			listed := make([]listedToken, 0, len(tokens))
			for _, t := range tokens {
				listed = append(listed, listToken(t))
			}
			return opts.writeTokens(cmd, listed)
		},
	}
	cmd.Flags().StringArrayVar(&owners, "owner-principal", nil, "describe only the tokens of this owner, as Type:Name (repeatable)")
	return cmd
}
