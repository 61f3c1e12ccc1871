package api

// AlterUserScramCredentials (key 51), version 0.
//
// Behavior:
//   - Decided by the active controller (forwarded there from other nodes).
//     The client sends the salt and the salted password; the controller
//     keeps only the stored key and server key derived from them
//     (UserScramCredentialRecord), never the salted password.
//   - One result per user. A user altered twice for one mechanism answers
//     DUPLICATE_RESOURCE; an unknown mechanism UNSUPPORTED_SASL_MECHANISM;
//     fewer than 4096 or more than 16384 iterations, or an empty name,
//     UNACCEPTABLE_CREDENTIAL; deleting a credential that does not exist
//     RESOURCE_NOT_FOUND. Such a user's alterations are all dropped; the
//     other users' are committed together in one metadata log entry.
//   - Needs ALTER on the cluster, checked by the active controller (a
//     forwarded request as the client the Envelope names): without it
//     every user named answers CLUSTER_AUTHORIZATION_FAILED, in user
//     order, as Kafka's getErrorResponse.

import (
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/security"
)

func init() {
	register(51, 0, 0, handleAlterUserScramCredentials)
	registerController(51, 0, 0, handleAlterUserScramCredentials)
}

func handleAlterUserScramCredentials(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.AlterUserSCRAMCredentialsRequest)
	if b.forwarded(c, req) {
		return
	}
	if !b.authorizeCluster(c, opAlter) {
		resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
		users := append(namesOfDeletions(req), namesOfUpsertions(req)...)
		slices.Sort(users)
		for _, user := range slices.Compact(users) {
			result := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
			result.User, result.ErrorCode = user, kerr.ClusterAuthorizationFailed.Code
			result.ErrorMessage = strptr(kerr.ClusterAuthorizationFailed.Message)
			resp.Results = append(resp.Results, result)
		}
		c.reply(resp)
		return
	}
	deletions := make([]controller.ScramDeletion, 0, len(req.Deletions))
	for _, d := range req.Deletions {
		deletions = append(deletions, controller.ScramDeletion{User: d.Name, Mechanism: d.Mechanism})
	}
	upsertions := make([]controller.ScramUpsertion, 0, len(req.Upsertions))
	for _, u := range req.Upsertions {
		up := controller.ScramUpsertion{User: u.Name, Mechanism: u.Mechanism, Iterations: u.Iterations}
		m := security.ScramMechanism(u.Mechanism)
		if (m == security.ScramSHA256 || m == security.ScramSHA512) && len(u.Salt) > 0 && len(u.SaltedPassword) > 0 {
			credential := security.CredentialFromSaltedPassword(m, u.Salt, u.SaltedPassword, u.Iterations)
			up.Salt, up.StoredKey, up.ServerKey = credential.Salt, credential.StoredKey, credential.ServerKey
		}
		upsertions = append(upsertions, up)
	}
	resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
	results, err := b.Controller.AlterUserScramCredentials(deletions, upsertions)
	if err != nil {
		code := kerr.UnknownServerError.Code
		if errors.Is(err, controller.ErrNotActive) {
			code = kerr.NotController.Code
		}
		message := err.Error()
		seen := map[string]bool{}
		for _, user := range append(namesOfDeletions(req), namesOfUpsertions(req)...) {
			if !seen[user] {
				seen[user] = true
				result := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
				result.User, result.ErrorCode, result.ErrorMessage = user, code, &message
				resp.Results = append(resp.Results, result)
			}
		}
		c.reply(resp)
		return
	}
	for _, res := range results {
		result := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		result.User, result.ErrorCode = res.User, res.ErrorCode
		if res.ErrorCode != 0 {
			result.ErrorMessage = strptr(res.ErrorMessage)
		}
		resp.Results = append(resp.Results, result)
	}
	c.reply(resp)
}

func namesOfDeletions(req *kmsg.AlterUserSCRAMCredentialsRequest) []string {
	out := make([]string, 0, len(req.Deletions))
	for _, d := range req.Deletions {
		out = append(out, d.Name)
	}
	return out
}

func namesOfUpsertions(req *kmsg.AlterUserSCRAMCredentialsRequest) []string {
	out := make([]string, 0, len(req.Upsertions))
	for _, u := range req.Upsertions {
		out = append(out, u.Name)
	}
	return out
}
