output "namespace" {
  description = "Namespace of the platform's controllers."
  value       = kubernetes_namespace_v1.platform.metadata[0].name
}

output "job_namespaces" {
  description = "Namespaces where tables, pipelines and Spark jobs live."
  value       = var.job_namespaces
}

output "bucket_name" {
  description = "The bucket holding the tables: base paths look like s3a://<bucket>/<database>/<table>."
  value       = local.bucket_name
}

output "iam_role_arn" {
  description = "IAM role the jobs, the operator and the metastore assume (empty without workload identity)."
  value       = local.role_arn
}

output "spark_service_account" {
  description = "The Spark jobs' service account in each job namespace."
  value       = var.spark_service_account
}

output "release" {
  description = "Name and chart version of the installed hudi-lakehouse release."
  value       = { name = helm_release.lakehouse.name, version = helm_release.lakehouse.metadata[0].version }
}
