variable "namespace" {
  description = "Namespace the platform's controllers (operator, metastore) are installed into."
  type        = string
  default     = "hudi-platform"

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", var.namespace)) && length(var.namespace) <= 63
    error_message = "namespace must be a DNS-1123 label: lower-case letters, digits and '-', at most 63 characters."
  }
}

variable "job_namespaces" {
  description = "Namespaces where HudiTables, HudiPipelines and their Spark jobs live; created by this module."
  type        = list(string)
  default     = ["lakehouse"]

  validation {
    condition     = length(var.job_namespaces) > 0 && alltrue([for n in var.job_namespaces : can(regex("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", n))])
    error_message = "job_namespaces needs at least one namespace, each a DNS-1123 label."
  }
}

variable "chart_path" {
  description = "Path (or repository URL) of the hudi-lakehouse chart; null: the chart beside this module."
  type        = string
  default     = null
}

variable "chart_version" {
  description = "Version of the hudi-lakehouse chart; null for the local chart's own."
  type        = string
  default     = null
}

variable "components" {
  description = "Which parts of the platform to install (false where the cluster already has one)."
  type = object({
    hudi_operator         = optional(bool, true)
    hive_metastore        = optional(bool, true)
    spark_operator        = optional(bool, true)
    strimzi               = optional(bool, true)
    kafka                 = optional(bool, true)
    kube_prometheus_stack = optional(bool, true)
  })
  default = {}
}

variable "operator_replicas" {
  description = "Operator replicas: more than one run as peers, one working and the others standing by."
  type        = number
  default     = 1

  validation {
    condition     = var.operator_replicas >= 1 && var.operator_replicas <= 5 && floor(var.operator_replicas) == var.operator_replicas
    error_message = "operator_replicas must be a whole number from 1 to 5."
  }
}

variable "create_bucket" {
  description = "Create the S3 bucket for the tables (false: use an existing bucket named bucket_name)."
  type        = bool
  default     = true
}

variable "bucket_name" {
  description = "S3 bucket holding the lakehouse's tables."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket_name))
    error_message = "bucket_name must be a valid S3 bucket name (3-63 lower-case letters, digits, '.' and '-'), without s3:// or a path."
  }
}

variable "oidc_provider_arn" {
  description = "ARN of the cluster's IAM OIDC provider (EKS), for workload identity (IRSA). Empty: no IAM role is made and credentials_secret is used."
  type        = string
  default     = ""

  validation {
    condition     = var.oidc_provider_arn == "" || can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:oidc-provider/.+$", var.oidc_provider_arn))
    error_message = "oidc_provider_arn must be an IAM OIDC provider ARN (arn:aws:iam::<account>:oidc-provider/...) or empty."
  }
}

variable "credentials_secret" {
  description = "Name of an existing Secret with object-storage keys, when workload identity is not used. Never the keys themselves."
  type        = string
  default     = ""
}

variable "spark_service_account" {
  description = "Service account the Spark jobs run as in each job namespace, unless a table names another."
  type        = string
  default     = "hudi-spark"
}

variable "tags" {
  description = "Tags for the AWS resources this module creates."
  type        = map(string)
  default     = {}
}
