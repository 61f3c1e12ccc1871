package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type userRow struct {
	User       string
	Mechanisms []string
	Error      string
}

type aclRow struct {
	Principal, Host, ResourceType, ResourceName, Pattern, Operation, Permission string
}

type securityData struct {
	Users      []userRow
	UsersError string
	ACLs       []aclRow
	ACLsError  string
}

func (c *Console) securityPage(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	var data securityData
	users, err := s.admin.DescribeUserSCRAMs(ctx)
	if err != nil {
		data.UsersError = err.Error()
	}
	for _, u := range users {
		row := userRow{User: u.User}
		if u.Err != nil {
			row.Error = u.Err.Error()
		}
		for _, info := range u.CredInfos {
			row.Mechanisms = append(row.Mechanisms, info.String())
		}
		data.Users = append(data.Users, row)
	}
	slices.SortFunc(data.Users, func(a, b userRow) int { return strings.Compare(a.User, b.User) })
	all := kadm.NewACLs().AnyResource().Allow().Deny().AllowHosts().DenyHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny)
	described, err := s.admin.DescribeACLs(ctx, all)
	if err != nil {
		data.ACLsError = err.Error()
	}
	for _, result := range described {
		if result.Err != nil {
			data.ACLsError = result.Err.Error()
			continue
		}
		for _, acl := range result.Described {
			data.ACLs = append(data.ACLs, aclRow{Principal: acl.Principal, Host: acl.Host, ResourceType: acl.Type.String(),
				ResourceName: acl.Name, Pattern: acl.Pattern.String(), Operation: acl.Operation.String(), Permission: acl.Permission.String()})
		}
	}
	slices.SortFunc(data.ACLs, func(a, b aclRow) int {
		return strings.Compare(a.ResourceType+a.ResourceName+a.Principal+a.Operation, b.ResourceType+b.ResourceName+b.Principal+b.Operation)
	})
	c.render(w, r, http.StatusOK, "security", page{Title: "Users and ACLs", Nav: "security", Data: data})
}

func scramMechanism(name string) (kadm.ScramMechanism, error) {
	switch name {
	case "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, fmt.Errorf("mechanism %q: expected SCRAM-SHA-256 or SCRAM-SHA-512", name)
}

func (c *Console) upsertUser(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	user, password := strings.TrimSpace(r.PostFormValue("user")), r.PostFormValue("password")
	mechanism, err := scramMechanism(r.PostFormValue("mechanism"))
	if err == nil && (user == "" || password == "") {
		err = errors.New("user and password are required")
	}
	iterations := int64(4096)
	if err == nil && r.PostFormValue("iterations") != "" {
		iterations, err = formInt(r, "iterations", 4096, 16384)
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	altered, err := s.admin.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: mechanism, Iterations: int32(iterations), Password: password}})
	if err == nil {
		err = altered.Error()
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Errorf("set the password of %s: %w", user, err))
		return
	}
	redirect(w, r, "/security", "set the "+r.PostFormValue("mechanism")+" password of "+user)
}

func (c *Console) deleteUser(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	user := strings.TrimSpace(r.PostFormValue("user"))
	mechanism, err := scramMechanism(r.PostFormValue("mechanism"))
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	altered, err := s.admin.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: user, Mechanism: mechanism}}, nil)
	if err == nil {
		err = altered.Error()
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Errorf("delete the credential of %s: %w", user, err))
		return
	}
	redirect(w, r, "/security", "deleted the "+r.PostFormValue("mechanism")+" credential of "+user)
}

// aclFromForm builds the exact ACL a form names.
func aclFromForm(r *http.Request) (*kadm.ACLBuilder, error) {
	principal := strings.TrimSpace(r.PostFormValue("principal"))
	host := strings.TrimSpace(r.PostFormValue("host"))
	name := strings.TrimSpace(r.PostFormValue("resource_name"))
	if host == "" {
		host = "*"
	}
	if !strings.Contains(principal, ":") {
		return nil, fmt.Errorf("principal %q: expected Type:name, such as User:alice", principal)
	}
	resourceType, err := kmsg.ParseACLResourceType(r.PostFormValue("resource_type"))
	if err != nil {
		return nil, fmt.Errorf("resource type: %w", err)
	}
	pattern, err := kmsg.ParseACLResourcePatternType(r.PostFormValue("pattern"))
	if err != nil {
		return nil, fmt.Errorf("pattern: %w", err)
	}
	operation, err := kmsg.ParseACLOperation(r.PostFormValue("operation"))
	if err != nil {
		return nil, fmt.Errorf("operation: %w", err)
	}
	b := kadm.NewACLs().ResourcePatternType(pattern).Operations(operation)
	switch resourceType {
	case kmsg.ACLResourceTypeTopic:
		b.Topics(name)
	case kmsg.ACLResourceTypeGroup:
		b.Groups(name)
	case kmsg.ACLResourceTypeCluster:
		b.Clusters()
	case kmsg.ACLResourceTypeTransactionalId:
		b.TransactionalIDs(name)
	case kmsg.ACLResourceTypeDelegationToken:
		b.DelegationTokens(name)
	default:
		return nil, fmt.Errorf("resource type %s cannot carry an ACL", resourceType)
	}
	switch strings.ToUpper(r.PostFormValue("permission")) {
	case "ALLOW":
		b.Allow(principal).AllowHosts(host)
	case "DENY":
		b.Deny(principal).DenyHosts(host)
	default:
		return nil, fmt.Errorf("permission %q: expected ALLOW or DENY", r.PostFormValue("permission"))
	}
	return b, nil
}

func (c *Console) createACL(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	b, err := aclFromForm(r)
	if err == nil {
		err = b.ValidateCreate()
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	results, err := s.admin.CreateACLs(ctx, b)
	for _, result := range results {
		if err == nil && result.Err != nil {
			err = fmt.Errorf("%w: %s", result.Err, result.ErrMessage)
		}
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Errorf("create ACL: %w", err))
		return
	}
	redirect(w, r, "/security", "created the ACL")
}

func (c *Console) deleteACL(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	b, err := aclFromForm(r)
	if err == nil {
		err = b.ValidateDelete()
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	results, err := s.admin.DeleteACLs(ctx, b)
	deleted := 0
	for _, result := range results {
		if err == nil && result.Err != nil {
			err = fmt.Errorf("%w: %s", result.Err, result.ErrMessage)
		}
		deleted += len(result.Deleted)
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Errorf("delete ACL: %w", err))
		return
	}
	redirect(w, r, "/security", fmt.Sprintf("deleted %d ACLs", deleted))
}
