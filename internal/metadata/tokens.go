package metadata

import (
	"maps"
	"slices"
	"sort"
)

// Delegation tokens (KIP-48). A DelegationTokenRecord creates a token or
// replaces it (a renewal or an earlier expiry); a RemoveDelegationTokenRecord
// deletes it. Principals are written "Type:Name". The record never holds the
// token's HMAC, the password a client authenticates with: every node derives
// it from the token id and delegation.token.secret.key, as Kafka does.
//
//	DelegationTokenRecord (type 10, version 0)
//	  {"owner": "User:alice", "requester": "User:admin",
//	   "renewers": ["User:bob"], "issueTimestamp": 1700000000000,
//	   "maxTimestamp": 1700604800000, "expirationTimestamp": 1700086400000,
//	   "tokenId": "<base64url uuid>"}
//	RemoveDelegationTokenRecord (type 26, version 0)
//	  {"tokenId": "<base64url uuid>"}

// Record types of delegation tokens, Kafka's numbers.
const (
	TypeDelegationToken       RecordType = 10
	TypeRemoveDelegationToken RecordType = 26
)

// DelegationTokenRecord creates or replaces a delegation token.
type DelegationTokenRecord struct {
	Owner     string   `json:"owner"`
	Requester string   `json:"requester"`
	Renewers  []string `json:"renewers"`
	// Timestamps are Unix milliseconds.
	IssueTimestamp      int64  `json:"issueTimestamp"`
	MaxTimestamp        int64  `json:"maxTimestamp"`
	ExpirationTimestamp int64  `json:"expirationTimestamp"`
	TokenID             string `json:"tokenId"`
}

// RemoveDelegationTokenRecord deletes a delegation token.
type RemoveDelegationTokenRecord struct {
	TokenID string `json:"tokenId"`
}

// Type implementations.
func (*DelegationTokenRecord) Type() RecordType       { return TypeDelegationToken }
func (*RemoveDelegationTokenRecord) Type() RecordType { return TypeRemoveDelegationToken }

// DelegationToken is a token as the image holds it.
// Invariant: IssueTimestamp <= ExpirationTimestamp <= MaxTimestamp for
// tokens the controller wrote.
type DelegationToken struct {
	TokenID             string
	Owner               string
	Requester           string
	Renewers            []string
	IssueTimestamp      int64
	MaxTimestamp        int64
	ExpirationTimestamp int64
}

// OwnerOrRenewer reports whether principal owns the token, requested it,
// or may renew it (Kafka's TokenInformation.ownerOrRenewer).
func (t DelegationToken) OwnerOrRenewer(principal string) bool {
	return t.Owner == principal || t.Requester == principal || slices.Contains(t.Renewers, principal)
}

// DelegationToken returns the token with id.
func (img *Image) DelegationToken(id string) (DelegationToken, bool) {
	t, ok := img.tokens[id]
	return t, ok
}

// DelegationTokens returns every token, sorted by id.
func (img *Image) DelegationTokens() []DelegationToken {
	out := make([]DelegationToken, 0, len(img.tokens))
	for _, t := range img.tokens {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TokenID < out[j].TokenID })
	return out
}

// applyToken applies a token record to a freshly cloned image; false for
// other records.
func (img *Image) applyToken(r Record) bool {
	switch r := r.(type) {
	case *DelegationTokenRecord:
		img.tokens = maps.Clone(img.tokens)
		if img.tokens == nil {
			img.tokens = map[string]DelegationToken{}
		}
		img.tokens[r.TokenID] = DelegationToken{TokenID: r.TokenID, Owner: r.Owner, Requester: r.Requester,
			Renewers: slices.Clone(r.Renewers), IssueTimestamp: r.IssueTimestamp, MaxTimestamp: r.MaxTimestamp,
			ExpirationTimestamp: r.ExpirationTimestamp}
	case *RemoveDelegationTokenRecord:
		img.tokens = maps.Clone(img.tokens)
		delete(img.tokens, r.TokenID)
	default:
		return false
	}
	return true
}

// tokenRecords rebuild the tokens in a snapshot.
func (img *Image) tokenRecords() []Record {
	var recs []Record
	for _, t := range img.DelegationTokens() {
		recs = append(recs, &DelegationTokenRecord{Owner: t.Owner, Requester: t.Requester, Renewers: t.Renewers,
			IssueTimestamp: t.IssueTimestamp, MaxTimestamp: t.MaxTimestamp, ExpirationTimestamp: t.ExpirationTimestamp,
			TokenID: t.TokenID})
	}
	return recs
}

// decodeTokenRecord returns an empty record of a token type, or nil.
func decodeTokenRecord(t RecordType) Record {
	switch t {
	case TypeDelegationToken:
		return new(DelegationTokenRecord)
	case TypeRemoveDelegationToken:
		return new(RemoveDelegationTokenRecord)
	}
	return nil
}
