select order_id, customer_id, amount as amount_usd
from {{ source('raw', 'orders') }}
