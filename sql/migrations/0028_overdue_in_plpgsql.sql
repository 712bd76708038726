-- admin.moderation_overdue() again, as PL/pgSQL. As an SQL function it was inlined into the
-- caller's query, and on Citus a query with parameters around it (`… WHERE tenant = $1`, as
-- any driver sends) is refused: "parameterized queries for SQL functions referencing
-- distributed tables are not supported". A PL/pgSQL function is planned on its own.
CREATE OR REPLACE FUNCTION admin.moderation_overdue() RETURNS TABLE (
    tenant text, target_type text, target_id bigint, open_reports bigint, oldest_report_at timestamptz, overdue interval)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT t.slug, r.target_type, r.target_id, r.reports, r.oldest, now() - r.oldest - interval '24 hours'
    FROM (SELECT reports.tenant_id, reports.target_type, reports.target_id, count(*) AS reports, min(reports.created_at) AS oldest
          FROM reports WHERE reports.state = 'open'
          GROUP BY reports.tenant_id, reports.target_type, reports.target_id) r
    JOIN tenants t ON t.id = r.tenant_id
    WHERE r.oldest < now() - interval '24 hours'
    ORDER BY r.oldest;
END
$$;
