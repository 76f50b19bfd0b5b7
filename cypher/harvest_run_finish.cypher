// Close a harvest. Params: id, finished, status, error, watermark, counts (flat map of integers).
MATCH (h:HarvestRun {id: $id})
SET h += $counts, h.finished = $finished, h.status = $status, h.error = $error,
    h.watermark = $watermark
