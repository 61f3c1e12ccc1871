// Package console is the web console the node serves on console.listener:
// server-rendered pages (html/template, embedded with the stylesheet and one
// small script under assets/) over a franz-go client inside the node.
//
// Every read and change goes through that client to the node's own client
// listener, so the console obeys the same request limits and ACLs as any
// client and never runs on the node's request handlers. With SASL on, each
// user logs in with HTTP basic credentials (checked by the HTTP layer) and
// gets a client of their own that logs in as them (clientPool, bounded by
// console.sessions.max); without SASL one anonymous client serves everyone.
//
// Routes:
//
//	GET  /                          overview: brokers, quorum, partition health, plots
//	GET  /api/metrics               the plots' samples (JSON), from the node's metrics
//	GET  /api/groups/{g}/lag        a group's lag samples (JSON)
//	GET  /topics, /topics/{t}       topics; one topic's partitions and configs
//	POST /topics                    create; /topics/{t}/configs, /partitions, /delete
//	GET  /topics/{t}/records        records browser (query syntax in query.go)
//	GET  /topics/{t}/tail           live tail, server-sent events (tail.go)
//	GET  /groups, /groups/{g}       groups with lag, paged; one group
//	POST /groups/{g}/reset          offset reset, dry run unless action=apply
//	POST /groups/{g}/delete         any group, share groups too (DeleteGroups)
//	GET  /share-groups/{g}          a share group: members, share-partition start offsets
//	POST /share-groups/{g}/reset    AlterShareGroupOffsets, dry run unless action=apply
//	POST /share-groups/{g}/delete-offsets  DeleteShareGroupOffsets of one topic
//	GET  /schemas, /schemas/{s}     schema registry subjects, versions, diffs
//	GET  /security                  SCRAM users and ACLs; POST to change them
//	GET  /transactions              transactions, hanging ones, producers
//
// A POST must come from a page of the console (Origin or Referer naming its
// host) and is refused when console.read.only is true.
//
// Bounds: a records scan stops at console.records.max records shown,
// console.records.max.bytes read or console.records.timeout.ms, whichever
// comes first, and says which; a tail ends after console.tail.max.ms or when
// the browser goes away; a filter's evaluation is bounded by a CEL cost
// limit; the plots keep an hour of samples (Sampler, one Ring each, lag for
// at most lagGroupsMax groups).
package console
