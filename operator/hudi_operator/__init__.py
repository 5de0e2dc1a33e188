"""The Kubernetes operator of the lakehouse: the HudiTable/HudiPipeline API, the planner that turns
them into Spark jobs, and the kopf handlers that keep those jobs converged."""
