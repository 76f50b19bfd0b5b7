// FLOWS_TO edges into present assets that were there by $since, the edges having started,
// stopped or come back within (since, until]: the upstream-drift rule compares each at both
// ends (docs/alerts.md). Params: since, until (epoch ms).
MATCH (u:Asset)-[e:FLOWS_TO]->(a:Asset)
WHERE a.deleted_at IS NULL AND a.first_seen <= $since
  AND ((e.first_seen > $since AND e.first_seen <= $until)
       OR any(s IN coalesce(e.stopped, []) WHERE s > $since AND s <= $until)
       OR any(s IN coalesce(e.resumed, []) WHERE s > $since AND s <= $until))
RETURN a.urn AS asset, u.urn AS upstream, e.first_seen AS first_seen, e.stopped AS stopped,
       e.resumed AS resumed, coalesce(e.via, []) AS via
ORDER BY asset, upstream
