select o.order_id, c.full_name as customer_name, o.amount_usd * 100 as amount_cents
from {{ ref('stg_orders') }} as o
join {{ ref('stg_customers') }} as c on c.customer_id = o.customer_id
