-- Argo CD health of an Application (argoproj.io), for the app of apps: Argo CD reports no health for
-- Applications since 1.8, so without this the root application starts the lakehouse Application's
-- sync wave before the platform (its CRDs and operator) is up. A child is Healthy once its own sync
-- has finished and its resources are healthy; until then, or while resources are still missing,
-- it is Progressing. Lua 5.1 (gopher-lua), base library only.

local hs = {status = "Progressing", message = "waiting for the Application to sync"}
local status = obj.status
if status == nil or status.health == nil or status.health.status == nil then
  return hs
end
if status.operationState ~= nil and status.operationState.phase == "Running" then
  hs.message = status.operationState.message or "syncing"
  return hs
end
if status.health.status == "Missing" then
  hs.message = status.health.message or "its resources do not exist yet"
  return hs
end
hs.status = status.health.status
hs.message = status.health.message or ""
return hs
