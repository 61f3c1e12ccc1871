package api

// DescribeUserScramCredentials (key 50), version 0.
//
// Behavior:
//   - Answered from this node's metadata image: every user with a SCRAM
//     credential when users is null or empty, else the users named, with
//     each credential's mechanism and iteration count (never a salt or a
//     key).
//   - A user named twice answers DUPLICATE_RESOURCE for that user; a user
//     without credentials RESOURCE_NOT_FOUND, with Kafka's messages.
//   - Needs DESCRIBE on the cluster: without it the response's error and
//     one result per user named (with no user name, as Kafka's
//     getErrorResponse builds it) are CLUSTER_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() {
	register(50, 0, 0, handleDescribeUserScramCredentials)
	registerController(50, 0, 0, handleDescribeUserScramCredentials)
}

func handleDescribeUserScramCredentials(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := kmsg.NewPtrDescribeUserSCRAMCredentialsResponse()
	if !b.authorizeCluster(c, opDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		for range req.Users {
			result := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
			result.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			resp.Results = append(resp.Results, result)
		}
		c.reply(resp)
		return
	}
	img := b.Image()
	byUser := map[string][]metadata.ScramKey{}
	var all []string
	for _, k := range img.ScramUsers() {
		if len(byUser[k.User]) == 0 {
			all = append(all, k.User)
		}
		byUser[k.User] = append(byUser[k.User], k)
	}
	describe := func(user string) kmsg.DescribeUserSCRAMCredentialsResponseResult {
		result := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		result.User = user
		for _, k := range byUser[user] {
			credential, _ := img.ScramCredential(k.User, k.Mechanism)
			info := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
			info.Mechanism, info.Iterations = k.Mechanism, credential.Iterations
			result.CredentialInfos = append(result.CredentialInfos, info)
		}
		return result
	}
	if len(req.Users) == 0 {
		for _, user := range all {
			resp.Results = append(resp.Results, describe(user))
		}
		c.reply(resp)
		return
	}
	counts := map[string]int{}
	for _, u := range req.Users {
		counts[u.Name]++
	}
	for _, u := range req.Users {
		if counts[u.Name] < 0 {
			continue // a duplicate, already answered
		}
		result := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		result.User = u.Name
		switch {
		case counts[u.Name] > 1:
			counts[u.Name] = -1
			result.ErrorCode = kerr.DuplicateResource.Code
			result.ErrorMessage = strptr("Cannot describe SCRAM credentials for the same user twice in a single request: " + u.Name)
		case len(byUser[u.Name]) == 0:
			result.ErrorCode = kerr.ResourceNotFound.Code
			result.ErrorMessage = strptr("Attempt to describe a user credential that does not exist: " + u.Name)
		default:
			result = describe(u.Name)
		}
		resp.Results = append(resp.Results, result)
	}
	c.reply(resp)
}
