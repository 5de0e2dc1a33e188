-- Argo CD health of HudiTable and HudiPipeline (lakehouse.hudi.dev), read from the status the Hudi
-- operator writes: observedGeneration, phase, message and the Ready/Progressing/Degraded conditions.
-- One script serves both kinds: argocd-cm-health.yaml carries it under
-- resource.customizations.health.lakehouse.hudi.dev_HudiTable and ..._HudiPipeline.
-- Written for Argo CD's Lua (gopher-lua, Lua 5.1), which gives a health check from argocd-cm only the
-- base and table libraries (and a reduced os): no string or math library.
--
--   no status yet, or a spec generation the operator has not seen   Progressing
--   Degraded condition True, phase Degraded or Failed                Degraded (the operator's message)
--   pipeline rolled back to its last stable spec                     Degraded (Git's spec is not what runs)
--   pipeline suspended (spec.state: suspended)                       Suspended
--   pipeline Running or Succeeded and not upgrading                  Healthy
--   table Ready, or Pending until the first commit                   Healthy
--   anything else (deploying, upgrading, restarting, deleting)       Progressing
-- A table waiting for its first commit is Healthy: its pipelines, which make that commit, are in a
-- later sync wave, and Argo CD starts a wave only once the one before it is Healthy.

local function result(status, message)
  return {status = status, message = message or ""}
end

local function condition(status, kind)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == kind and c.status == "True" then
      return c
    end
  end
  return nil
end

local status = obj.status
if status == nil then
  return result("Progressing", "waiting for the Hudi operator to report a status")
end
if status.phase == "Deleting" then
  return result("Progressing", status.message or "deleting")
end
local generation = obj.metadata.generation
if generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < generation) then
  return result("Progressing", "waiting for the Hudi operator to reconcile generation " .. generation)
end

local degraded = condition(status, "Degraded")
if degraded ~= nil then
  return result("Degraded", degraded.message)
end
if status.phase == "Degraded" or status.phase == "Failed" then
  return result("Degraded", status.message)
end

if obj.kind == "HudiTable" then
  if status.phase == "Ready" or status.phase == "Pending" then
    return result("Healthy", status.message)
  end
else
  if status.reconciliation ~= nil and status.reconciliation.state == "ROLLED_BACK" then
    return result("Degraded", "the spec failed after an upgrade and the last stable spec runs instead; "
      .. "change the spec to try again (" .. (status.message or "") .. ")")
  end
  if status.phase == "Suspended" then
    return result("Suspended", status.message)
  end
  local progressing = condition(status, "Progressing")
  if progressing ~= nil then
    return result("Progressing", progressing.message)
  end
  if status.phase == "Running" or status.phase == "Succeeded" then
    return result("Healthy", status.message)
  end
end
return result("Progressing", status.message)
