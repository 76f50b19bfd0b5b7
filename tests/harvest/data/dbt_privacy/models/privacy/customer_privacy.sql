{{ config(materialized='table', tags=['restricted', 'nightly'], meta={'classification': 'confidential'}) }}
-- A hash and a count carry no identity; name_plain copies the name as it is.
select c.customer_id,
       md5(c.full_name) as name_hash,
       c.full_name as name_plain,
       count(o.order_id) as order_count
from {{ ref('stg_customers') }} as c
left join {{ ref('stg_orders') }} as o on o.customer_id = c.customer_id
group by c.customer_id, c.full_name
